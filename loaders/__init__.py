"""Knowledge-graph loaders: MetaQA, Freebase (RDF dump, FB15k, per-question triples) and DBpedia into Neo4j.

Entry points: :func:`kgqa.loaders.pipeline.load` (`kgqa load`), :func:`kgqa.loaders.indexing.build_indexes`
(`kgqa index`) and :func:`kgqa.graph.kg.list_kgs` (`kgqa kgs`). The graph model and the naming rules of
each source are described in ``loaders/README.md``.
"""
