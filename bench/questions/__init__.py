"""The hand-written question sets and their builders (``python -m bench.questions.build_NAME``)."""
