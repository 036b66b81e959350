package io.kgqa.procedures.subgraphrag;

import io.kgqa.procedures.subgraphrag.SubgraphRagProcedures.ScoredTriple;
import io.kgqa.procedures.subgraphrag.SubgraphRagProcedures.WalkRow;
import io.kgqa.procedures.util.Entities;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.neo4j.graphdb.Node;

/**
 * The rows a question's scored candidates stream as: the best triples ({@code retrieve}, select 'top'), the
 * triples of the best walks ({@code retrieve}, select 'paths'), or the walks themselves ({@code walks}).
 */
final class ScoredRows {

    private ScoredRows() {
    }

    /** The k best triples, highest score first; ties (and NaN, which sorts last) keep BFS order. */
    static List<ScoredTriple> top(Scored scored) {
        return rows(scored, PathSelection.byScore(scored.scores()));
    }

    /** Every entity pathHops steps out gets its best walk; the walks fill k best first, the best triples the rest. */
    static List<ScoredTriple> paths(Scored scored) {
        CandidateSubgraph subgraph = scored.subgraph();
        int[] chosen = PathSelection.select(subgraph.heads, subgraph.tails, scored.scores(), subgraph.topic,
                scored.pathHops(), scored.k());
        return rows(scored, Arrays.stream(chosen).boxed().toArray(Integer[]::new));
    }

    /** Each end entity's best walk, best first, while their distinct triples fit in k (see PathSelection). */
    static List<WalkRow> walks(Scored scored) {
        CandidateSubgraph subgraph = scored.subgraph();
        List<WalkRow> rows = new ArrayList<>();
        for (PathSelection.Walk walk : PathSelection.walksWithin(subgraph.heads, subgraph.tails, scored.scores(),
                subgraph.topic, scored.pathHops(), scored.k())) {
            rows.add(walkRow(scored, rows.size() + 1, walk, 1, List.of(), walk.score()));
        }
        return rows;
    }

    /** The walks of the best relation chains, chain by chain, while their distinct triples fit in k. */
    static List<WalkRow> chainWalks(Scored scored) {
        CandidateSubgraph subgraph = scored.subgraph();
        List<String> types = new ArrayList<>();
        Map<String, Integer> typeIds = new HashMap<>();
        int[] relations = new int[subgraph.size()];
        for (int t = 0; t < relations.length; t++) {
            String type = subgraph.relationships.get(t).getType().name();
            relations[t] = typeIds.computeIfAbsent(type, name -> {
                types.add(name);
                return types.size() - 1;
            });
        }
        List<ChainSelection.Chain> chains = ChainSelection.rank(subgraph.heads, subgraph.tails, relations,
                scored.scores(), subgraph.topic, scored.pathHops());
        List<WalkRow> rows = new ArrayList<>();
        for (ChainSelection.Ranked ranked : ChainSelection.walksWithin(chains, scored.k())) {
            ChainSelection.Chain chain = chains.get(ranked.chain());
            List<String> steps = new ArrayList<>(chain.relations().length);
            for (int i = 0; i < chain.relations().length; i++) {
                steps.add(types.get(chain.relations()[i]) + (chain.forward()[i] ? ">" : "<"));
            }
            rows.add(walkRow(scored, rows.size() + 1, ranked.walk(), ranked.chain() + 1, steps, chain.score()));
        }
        return rows;
    }

    private static WalkRow walkRow(Scored scored, long rank, PathSelection.Walk walk, long chainRank,
                                   List<String> chain, double chainScore) {
        CandidateSubgraph subgraph = scored.subgraph();
        List<List<String>> triplets = new ArrayList<>(walk.triples().length);
        List<Double> tripletScores = new ArrayList<>(walk.triples().length);
        for (int t : walk.triples()) {
            triplets.add(List.of(Entities.name(subgraph.nodes.get(subgraph.heads[t])),
                    subgraph.relationships.get(t).getType().name(),
                    Entities.name(subgraph.nodes.get(subgraph.tails[t]))));
            tripletScores.add((double) scored.scores()[t]);
        }
        return new WalkRow(rank, walk.score(), Entities.name(subgraph.nodes.get(walk.end())), triplets, tripletScores,
                chainRank, chain, chainScore);
    }

    /** The first k triples of {@code order} as rows, rank 1 first. */
    private static List<ScoredTriple> rows(Scored scored, Integer[] order) {
        CandidateSubgraph subgraph = scored.subgraph();
        int count = Math.min(scored.k(), order.length);
        List<ScoredTriple> rows = new ArrayList<>(count);
        for (int r = 0; r < count; r++) {
            int i = order[r];
            Node head = subgraph.nodes.get(subgraph.heads[i]);
            Node tail = subgraph.nodes.get(subgraph.tails[i]);
            rows.add(new ScoredTriple(Entities.name(head), subgraph.relationships.get(i).getType().name(),
                    Entities.name(tail), scored.scores()[i], r + 1));
        }
        return rows;
    }
}
