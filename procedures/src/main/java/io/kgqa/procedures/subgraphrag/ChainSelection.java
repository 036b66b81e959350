package io.kgqa.procedures.subgraphrag;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads SubgraphRAG's scored triples as relation chains: which sequence of relations, followed from the
 * topic entity, does the question ask for, and where does it end?
 *
 * <p>Why: the scorer rates each triple on its own, and the best single walk of a 3-hop question often
 * takes one triple the scorer over-rates by its entities (a film's writer rated above its director),
 * so its end is wrong although the right relation is rated higher on the whole. A chain aggregates the
 * scores of every triple it takes at each step, which averages that noise away; the chain's ends are
 * then one answer set, as a relation path gives it. MetaQA dev, validation part, 3-hop: Hits@1 56.5 for
 * the best walk, 72.5 for chains scored by mean probability, 76.0 by mean logit
 * ({@code bench/subgraphrag_chains.py}).
 *
 * <p>A chain is a sequence of (relation, direction) steps. It is executed from every topic entity over
 * the candidate triples; a walk never enters a topic entity, never goes straight back over the triple it
 * came by and never reaches an entity it passed. Its score is the sum over its steps of the mean score (logit, clipped to
 * &plusmn;{@value #LOGIT_CLIP}) of the triples it takes at that step: the scorer's probabilities saturate
 * near 1 on many triples of a 3-hop question, where logits still tell them apart. Along a chain, each end
 * entity keeps its best walk (sum of log-sigmoid, as in {@link PathSelection}).
 *
 * <p>Pure: arrays in, chains out; no database.
 */
public final class ChainSelection {

    /** Walks kept per node and chain prefix (see Arrivals). */
    static final int ARRIVALS = 3;

    /** One extreme triple must not outweigh the rest of its step. */
    public static final double LOGIT_CLIP = 20.0;

    private ChainSelection() {
    }

    /**
     * One relation chain and its ends.
     *
     * @param relations relation id per step
     * @param forward   per step, whether it follows the triple from head to tail
     * @param score     sum over steps of the mean clipped score of the triples taken at that step
     * @param walks     each end entity's best walk along this chain, best first
     */
    public record Chain(int[] relations, boolean[] forward, double score, List<PathSelection.Walk> walks) {
    }

    /**
     * Every chain of exactly {@code depth} steps that ends at some non-topic entity, best first (ties: the
     * better best walk, then the chain met first).
     *
     * @param relations relation id of each triple
     */
    public static List<Chain> rank(int[] heads, int[] tails, int[] relations, float[] scores, boolean[] topic,
                                   int depth) {
        if (heads.length != tails.length || heads.length != scores.length || heads.length != relations.length) {
            throw new IllegalArgumentException("heads, tails, relations and scores differ in length: "
                    + heads.length + ", " + tails.length + ", " + relations.length + ", " + scores.length);
        }
        if (depth < 1) {
            throw new IllegalArgumentException("depth must be at least 1, got " + depth);
        }
        Map<Integer, List<Integer>> touching = new HashMap<>();
        for (int i = 0; i < heads.length; i++) {
            touching.computeIfAbsent(heads[i], n -> new ArrayList<>()).add(i);
            if (tails[i] != heads[i]) {
                touching.computeIfAbsent(tails[i], n -> new ArrayList<>()).add(i);
            }
        }
        Map<Integer, Arrivals> start = new LinkedHashMap<>();
        for (int node = 0; node < topic.length; node++) {
            if (topic[node] && touching.containsKey(node)) {
                Arrivals arrivals = new Arrivals();
                arrivals.offer(new Walked(0.0, new int[]{node}, new int[0]));
                start.put(node, arrivals);
            }
        }
        List<Prefix> frontier = List.of(new Prefix(new long[0], List.of(start), 0.0));
        for (int level = 0; level < depth && !frontier.isEmpty(); level++) {
            List<Prefix> next = new ArrayList<>();
            for (Prefix prefix : frontier) {
                Map<Long, Growing> grown = new LinkedHashMap<>();
                Map<Integer, Arrivals> at = prefix.levels().get(level);
                for (Map.Entry<Integer, Arrivals> entry : at.entrySet()) {
                    int node = entry.getKey();
                    Arrivals arrivals = entry.getValue();
                    for (int t : touching.get(node)) {
                        boolean forward = heads[t] == node;
                        int other = forward ? tails[t] : heads[t];
                        if (topic[other]) {
                            continue;
                        }
                        Walked via = arrivals.continuing(t, other);
                        if (via == null) {
                            continue;
                        }
                        Growing child = grown.computeIfAbsent(step(relations[t], forward), s -> new Growing());
                        child.scoreSum += clipped(scores[t]);
                        child.taken++;
                        child.nodes.computeIfAbsent(other, n -> new Arrivals()).offer(via.then(t, other,
                                PathSelection.logSigmoid(scores[t])));
                    }
                }
                for (Map.Entry<Long, Growing> entry : grown.entrySet()) {
                    Growing child = entry.getValue();
                    List<Map<Integer, Arrivals>> levels = new ArrayList<>(prefix.levels());
                    levels.add(child.nodes);
                    long[] steps = Arrays.copyOf(prefix.steps(), prefix.steps().length + 1);
                    steps[steps.length - 1] = entry.getKey();
                    next.add(new Prefix(steps, levels,
                            prefix.score() + child.scoreSum / child.taken));
                }
            }
            frontier = next;
        }
        List<Chain> chains = new ArrayList<>(frontier.size());
        for (Prefix prefix : frontier) {
            if (prefix.levels().size() <= depth || prefix.levels().get(depth).isEmpty()) {
                continue;
            }
            chains.add(prefix.toChain(depth));
        }
        chains.sort((a, b) -> {
            if (a.score() != b.score()) {
                return Double.compare(b.score(), a.score());
            }
            return Double.compare(b.walks().get(0).score(), a.walks().get(0).score());
        });
        return chains;
    }

    /** The chains' walks in chain order, each chain's best first: all of the first chain's (they are the answer
     * set), then the later chains' while their distinct triples fit in {@code k} together with what was taken. */
    public static List<Ranked> walksWithin(List<Chain> chains, int k) {
        if (k < 1) {
            throw new IllegalArgumentException("k must be at least 1, got " + k);
        }
        Set<Integer> taken = new HashSet<>();
        List<Ranked> kept = new ArrayList<>();
        for (int c = 0; c < chains.size(); c++) {
            for (PathSelection.Walk walk : chains.get(c).walks()) {
                int added = 0;
                for (int t : walk.triples()) {
                    if (!taken.contains(t)) {
                        added++;
                    }
                }
                if (c > 0 && taken.size() + added > k) {
                    continue;
                }
                for (int t : walk.triples()) {
                    taken.add(t);
                }
                kept.add(new Ranked(c, walk));
            }
        }
        return kept;
    }

    /** A walk and the 0-based rank of the chain it follows. */
    public record Ranked(int chain, PathSelection.Walk walk) {
    }

    private static long step(int relation, boolean forward) {
        return ((long) relation << 1) | (forward ? 1L : 0L);
    }

    private static double clipped(float x) {
        if (Float.isNaN(x)) {
            return -LOGIT_CLIP;
        }
        return Math.max(-LOGIT_CLIP, Math.min(LOGIT_CLIP, x));
    }

    /** A walk: its score (sum of log-sigmoid), the nodes it passed from the topic entity and its triples. */
    private record Walked(double score, int[] nodes, int[] triples) {

        Walked then(int triple, int node, double logSigmoid) {
            int[] moreNodes = Arrays.copyOf(nodes, nodes.length + 1);
            moreNodes[nodes.length] = node;
            int[] moreTriples = Arrays.copyOf(triples, triples.length + 1);
            moreTriples[triples.length] = triple;
            return new Walked(score + logSigmoid, moreNodes, moreTriples);
        }

        boolean passes(int node) {
            for (int n : nodes) {
                if (n == node) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * A node's best few walks along a chain prefix, best first. A walk never goes straight back over the
     * triple it came by and never reaches a node it passed (X, its director, a film he wrote, its director:
     * him again), so the best walk to a node may be unable to take the next step where a worse one can.
     */
    private static final class Arrivals {
        private final List<Walked> walks = new ArrayList<>(ARRIVALS);

        /** The best walk here that may take {@code triple} on to {@code next}; null when none may. */
        Walked continuing(int triple, int next) {
            for (Walked walk : walks) {
                int last = walk.triples().length - 1;
                if ((last < 0 || walk.triples()[last] != triple) && !walk.passes(next)) {
                    return walk;
                }
            }
            return null;
        }

        void offer(Walked walk) {
            int at = 0;
            while (at < walks.size() && walks.get(at).score() >= walk.score()) {
                at++;
            }
            if (at < ARRIVALS) {
                walks.add(at, walk);
                if (walks.size() > ARRIVALS) {
                    walks.remove(walks.size() - 1);
                }
            }
        }

        Walked best() {
            return walks.get(0);
        }
    }

    /** A chain being grown by one step: what it reached and the triples it took. */
    private static final class Growing {
        final Map<Integer, Arrivals> nodes = new LinkedHashMap<>();
        double scoreSum;
        int taken;
    }

    /** A chain prefix: its steps, the best walks to every node per level (level 0: the topic entities). */
    private record Prefix(long[] steps, List<Map<Integer, Arrivals>> levels, double score) {

        Chain toChain(int depth) {
            int[] relations = new int[steps.length];
            boolean[] forward = new boolean[steps.length];
            for (int i = 0; i < steps.length; i++) {
                relations[i] = (int) (steps[i] >> 1);
                forward[i] = (steps[i] & 1L) == 1L;
            }
            Map<Integer, Arrivals> last = levels.get(depth);
            List<PathSelection.Walk> walks = new ArrayList<>(last.size());
            for (Map.Entry<Integer, Arrivals> entry : last.entrySet()) {
                Walked best = entry.getValue().best();
                walks.add(new PathSelection.Walk(entry.getKey(), best.score(), best.triples()));
            }
            walks.sort((a, b) -> a.score() != b.score() ? Double.compare(b.score(), a.score())
                    : Integer.compare(a.end(), b.end()));
            return new Chain(relations, forward, score, walks);
        }
    }
}
