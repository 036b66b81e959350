"""Training on a GPU."""
