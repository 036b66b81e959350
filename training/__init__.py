"""Everything a KG's methods and ``auto`` read, learned from the KG itself: ``kgqa train (all)``.

The one home of learning: the labelled and synthesised questions, each part's fit (chain classifiers, GSR,
the path scorer, SubgraphRAG's scorer, FRAG's ranker, the prompt's worked example), and auto's route. The
route is measured by asking every method the KG's held-out questions, so this package sits above the
question-answering layer; query time never imports it and reads what it wrote through :mod:`kgqa.models`.
"""
