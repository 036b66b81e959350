package io.kgqa.procedures.subgraphrag;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Log;

/**
 * The scorer's input for a question's candidates: each triple's {@code [z_q ‖ z_head ‖ z_rel ‖ z_tail ‖ code_head ‖
 * code_tail (‖ z_q ⊙ z_rel)]} row (see {@link ScorerModel}), or, for a model with parts.onnx, each entity's and
 * relation's row once. The rows are written as the model reads them, never all held at once.
 *
 * @param log where the count of entities without an embedding goes; may be null
 */
record TripleFeatures(Transaction tx, Log log, String kg) {

    /** The score of every candidate triple, in the subgraph's order. */
    float[] score(ScorerModel model, CandidateSubgraph subgraph, float[] question, boolean includeSeed,
                  boolean cacheEmbeddings) {
        int dim = model.embeddingDim;
        int nodeCount = subgraph.nodes.size();
        // the model fixed the length: a stored embedding of another length is the KG's or the model's fault
        StoredEmbeddings stored = new StoredEmbeddings(tx, log, kg, fact -> new IllegalStateException(
                fact + "; model '" + model.name + "' expects " + dim));
        float[][] entityVectors = stored.entities(subgraph, dim, cacheEmbeddings);

        Map<String, float[]> relationVectors = new HashMap<>();
        String[] types = new String[subgraph.size()];
        for (int i = 0; i < types.length; i++) {
            types[i] = subgraph.relationships.get(i).getType().name();
            relationVectors.computeIfAbsent(types[i], type -> stored.relation(type, dim));
        }

        double[][] codes = subgraph.entityCodes(model.forwardRounds, model.reverseRounds, includeSeed);
        // every type, also those without a stored embedding (computeIfAbsent keeps no null)
        List<String> relationTypes = new ArrayList<>(new LinkedHashSet<>(Arrays.asList(types)));
        Map<String, Integer> relationRow = new HashMap<>();
        float[][] relationMatrix = new float[relationTypes.size()][];
        for (int r = 0; r < relationTypes.size(); r++) {
            relationRow.put(relationTypes.get(r), r);
            relationMatrix[r] = relationVectors.get(relationTypes.get(r));
        }
        int[] relations = new int[types.length];
        for (int i = 0; i < types.length; i++) {
            relations[i] = relationRow.get(types[i]);
        }
        PathCodes.Code[] paths = model.pathSteps > 0
                ? PathCodes.compute(nodeCount, subgraph.heads, relations, subgraph.tails, subgraph.topic,
                        model.pathSteps, relationMatrix.length)
                : null;
        float[][] entityCodes = new float[nodeCount][];
        for (int v = 0; v < nodeCount; v++) {
            entityCodes[v] = new float[codes[v].length];
            for (int j = 0; j < codes[v].length; j++) {
                entityCodes[v][j] = (float) codes[v][j];
            }
        }
        // An entity's code as the model reads it: DDE, then its path code's relation mixtures, expanded as
        // each row is written (materialised, they would take 1,536 floats per entity).
        PartsScorer.EntityWriter writeCode = (v, out) -> {
            out.put(entityCodes[v]);
            if (paths != null) {
                out.put(PathCodes.expand(paths[v], model.pathSteps, relationMatrix, dim));
            }
        };
        float[] zeros = new float[dim];
        if (model.hasParts()) {
            float[][] relationRows = new float[relationMatrix.length][];
            for (int r = 0; r < relationRows.length; r++) {
                relationRows[r] = relationMatrix[r] != null ? relationMatrix[r] : zeros;
            }
            return model.scoreByParts(nodeCount, subgraph.heads, subgraph.tails, relations, (v, out) -> {
                out.put(entityVectors[v] != null ? entityVectors[v] : zeros);
                writeCode.write(v, out);
            }, relationRows, question);
        }
        return model.score(subgraph.size(), (i, out) -> {
            int h = subgraph.heads[i];
            int t = subgraph.tails[i];
            float[] relation = relationVectors.get(types[i]);
            out.put(question);
            out.put(entityVectors[h] != null ? entityVectors[h] : zeros);
            out.put(relation != null ? relation : zeros);
            out.put(entityVectors[t] != null ? entityVectors[t] : zeros);
            writeCode.write(h, out);
            writeCode.write(t, out);
            if (model.questionRelation) {
                for (int j = 0; j < dim; j++) {
                    out.put(relation != null ? question[j] * relation[j] : 0f);
                }
            }
        });
    }
}
