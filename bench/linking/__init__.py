"""Entity linking: the topic entities found in a question, and how fast."""
