"""What a KG's methods need, learned from the KG itself: ``kgqa train all`` (above the question-answering
layer, since the route is learned by asking every method the KG's held-out questions)."""
