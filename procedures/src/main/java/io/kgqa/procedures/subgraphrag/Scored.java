package io.kgqa.procedures.subgraphrag;

/**
 * A question's candidate triples and their scores (index i of {@code scores} is triple i of {@code subgraph}),
 * with the k and walk length the call asked for.
 */
record Scored(CandidateSubgraph subgraph, float[] scores, int k, int pathHops) {
}
