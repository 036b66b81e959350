"""SubgraphRAG's triple scorer, trained for one KG: ``pipeline`` runs the steps, each in its own module (the
candidate subgraphs and their features, the weak labels, the examples, the model, its fitting and its ONNX
export)."""
