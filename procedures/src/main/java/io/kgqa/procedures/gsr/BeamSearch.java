package io.kgqa.procedures.gsr;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Beam search over a next-token model whose vocabulary is {@code PAD, BOS, EOS, relation tokens…}.
 *
 * <p>Kept apart from ONNX Runtime so that it can be tested against a model whose every probability is
 * known. Scores are summed log-probabilities, not length-normalised: chains are at most a few tokens, and
 * GSR ranks them the same way. At each step every live prefix proposes its {@code beams + 1} most likely
 * tokens (one more than the beam, so that an end token does not crowd out a continuation); the candidates
 * are ranked together; those that end are finished chains, the best {@code beams} others live on. All
 * candidates are looked at (at most beams · (beams + 1)): stopping early could miss a finished chain that
 * beats one finished at an earlier step.
 */
public final class BeamSearch {

    public static final int PAD = 0;
    public static final int BOS = 1;
    public static final int EOS = 2;

    /** The model: log-probabilities of the next token for each prefix (each starts with BOS). */
    @FunctionalInterface
    public interface NextToken {
        float[][] logprobs(List<int[]> prefixes) throws Exception;
    }

    /** A finished token sequence {@code BOS t1 … tn EOS} and its score. */
    public record Sequence(int[] tokens, double score) {

        /** The tokens between BOS and EOS. */
        public int[] body() {
            return Arrays.copyOfRange(tokens, 1, tokens.length - 1);
        }
    }

    private record Candidate(int[] tokens, double score, int order) {
    }

    private BeamSearch() {
    }

    /**
     * The {@code beams} best finished sequences with 1 to {@code maxLength} body tokens, best first.
     *
     * @throws IllegalArgumentException when beams or maxLength is not positive
     */
    public static List<Sequence> search(NextToken model, int beams, int maxLength) throws Exception {
        if (beams < 1 || maxLength < 1) {
            throw new IllegalArgumentException("beams and maxLength must be at least 1, got " + beams + " and " + maxLength);
        }
        List<Candidate> live = List.of(new Candidate(new int[] {BOS}, 0.0, 0));
        List<Candidate> done = new ArrayList<>();
        for (int step = 0; step <= maxLength && !live.isEmpty(); step++) {
            List<int[]> prefixes = new ArrayList<>(live.size());
            for (Candidate c : live) {
                prefixes.add(c.tokens());
            }
            float[][] rows = model.logprobs(prefixes);
            if (rows.length != live.size()) {
                throw new IllegalStateException("the model returned " + rows.length + " rows for " + live.size() + " prefixes");
            }
            List<Candidate> candidates = new ArrayList<>();
            for (int i = 0; i < live.size(); i++) {
                Candidate parent = live.get(i);
                for (int token : top(rows[i], beams + 1)) {
                    if (token == PAD || token == BOS) {
                        continue;
                    }
                    int[] tokens = Arrays.copyOf(parent.tokens(), parent.tokens().length + 1);
                    tokens[tokens.length - 1] = token;
                    candidates.add(new Candidate(tokens, parent.score() + rows[i][token], candidates.size()));
                }
            }
            // Best first; equal scores keep the order they were proposed in, so results are reproducible.
            candidates.sort(Comparator.comparingDouble((Candidate c) -> -c.score()).thenComparingInt(Candidate::order));
            List<Candidate> next = new ArrayList<>(beams);
            for (Candidate c : candidates) {
                int last = c.tokens()[c.tokens().length - 1];
                if (last == EOS) {
                    if (c.tokens().length > 2) { // an empty chain is no chain
                        done.add(c);
                    }
                } else if (next.size() < beams && c.tokens().length <= maxLength + 1) {
                    next.add(c);
                }
            }
            live = next;
        }
        done.sort(Comparator.comparingDouble((Candidate c) -> -c.score()));
        List<Sequence> best = new ArrayList<>(Math.min(beams, done.size()));
        for (Candidate c : done.subList(0, Math.min(beams, done.size()))) {
            best.add(new Sequence(c.tokens(), c.score()));
        }
        return best;
    }

    /** Indices of the {@code n} largest values, largest first; ties by index. */
    static int[] top(float[] row, int n) {
        Integer[] order = new Integer[row.length];
        for (int i = 0; i < row.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> row[a] != row[b] ? Float.compare(row[b], row[a]) : Integer.compare(a, b));
        int[] top = new int[Math.min(n, row.length)];
        for (int i = 0; i < top.length; i++) {
            top[i] = order[i];
        }
        return top;
    }
}
