"""Honest simulators: correct play from a real shoe or deck, plus labelled injected faults."""
