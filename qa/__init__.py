"""The question-answering layer: link -> retrieve -> answer, the method registry and stage timing."""
