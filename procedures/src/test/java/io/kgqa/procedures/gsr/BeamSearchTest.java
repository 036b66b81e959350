package io.kgqa.procedures.gsr;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Beam search against a model whose every probability is known: the next token depends only on the previous
 * one (a Markov table), so the score of every chain can be enumerated and the search checked against it.
 */
class BeamSearchTest {

    /** Tokens 0 PAD, 1 BOS, 2 EOS, 3..5 relations; row = previous token. */
    private static final double[][] PROBABILITIES = {
        {}, // PAD is never a previous token
        {0.00, 0.00, 0.05, 0.60, 0.25, 0.10},
        {},
        {0.00, 0.00, 0.30, 0.05, 0.60, 0.05},
        {0.00, 0.00, 0.80, 0.10, 0.05, 0.05},
        {0.00, 0.00, 0.40, 0.30, 0.20, 0.10},
    };

    private static float[] row(int previous) {
        float[] row = new float[6];
        for (int t = 0; t < 6; t++) {
            double p = PROBABILITIES[previous][t];
            row[t] = (float) Math.log(p == 0 ? 1e-12 : p);
        }
        return row;
    }

    private static final BeamSearch.NextToken MARKOV = prefixes -> {
        float[][] rows = new float[prefixes.size()][];
        for (int i = 0; i < rows.length; i++) {
            int[] prefix = prefixes.get(i);
            rows[i] = row(prefix[prefix.length - 1]);
        }
        return rows;
    };

    /** Every chain of 1..maxLength relation tokens, best first, scored as the search scores them. */
    private static List<BeamSearch.Sequence> bruteForce(int maxLength) {
        List<BeamSearch.Sequence> all = new ArrayList<>();
        List<int[]> bodies = new ArrayList<>(List.of(new int[0]));
        for (int length = 1; length <= maxLength; length++) {
            List<int[]> longer = new ArrayList<>();
            for (int[] body : bodies) {
                for (int t = 3; t <= 5; t++) {
                    int[] next = Arrays.copyOf(body, body.length + 1);
                    next[body.length] = t;
                    longer.add(next);
                }
            }
            for (int[] body : longer) {
                int[] tokens = new int[body.length + 2];
                tokens[0] = BeamSearch.BOS;
                System.arraycopy(body, 0, tokens, 1, body.length);
                tokens[tokens.length - 1] = BeamSearch.EOS;
                double score = 0;
                for (int i = 1; i < tokens.length; i++) {
                    score += row(tokens[i - 1])[tokens[i]];
                }
                all.add(new BeamSearch.Sequence(tokens, score));
            }
            bodies = longer;
        }
        all.sort(Comparator.comparingDouble(s -> -s.score()));
        return all;
    }

    @Test
    void oneBeamIsGreedy() throws Exception {
        // BOS -> 3 (0.6) -> 4 (0.6) -> EOS (0.8)
        List<BeamSearch.Sequence> best = BeamSearch.search(MARKOV, 1, 4);
        assertEquals(1, best.size());
        assertArrayEquals(new int[] {3, 4}, best.get(0).body());
        assertEquals(Math.log(0.6) + Math.log(0.6) + Math.log(0.8), best.get(0).score(), 1e-6);
    }

    @Test
    void wideBeamsFindTheBestChainsBestFirst() throws Exception {
        List<BeamSearch.Sequence> expected = bruteForce(3);
        List<BeamSearch.Sequence> got = BeamSearch.search(MARKOV, 10, 3);
        assertEquals(10, got.size());
        for (int i = 0; i < 5; i++) {
            assertArrayEquals(expected.get(i).tokens(), got.get(i).tokens(), "chain " + i);
            assertEquals(expected.get(i).score(), got.get(i).score(), 1e-9);
        }
        for (int i = 1; i < got.size(); i++) {
            assertTrue(got.get(i - 1).score() >= got.get(i).score(), "best first");
        }
    }

    @Test
    void chainsRespectTheMaximumLengthAndNeverHoldSpecials() throws Exception {
        for (BeamSearch.Sequence s : BeamSearch.search(MARKOV, 20, 2)) {
            assertTrue(s.body().length >= 1 && s.body().length <= 2, Arrays.toString(s.tokens()));
            assertEquals(BeamSearch.BOS, s.tokens()[0]);
            assertEquals(BeamSearch.EOS, s.tokens()[s.tokens().length - 1]);
            assertTrue(Arrays.stream(s.body()).allMatch(t -> t >= 3), Arrays.toString(s.tokens()));
        }
        // 3 chains of one token + 9 of two exist; twenty beams return all twelve
        assertEquals(12, BeamSearch.search(MARKOV, 20, 2).size());
    }

    @Test
    void rejectsNonPositiveBeamsAndALyingModel() {
        assertThrows(IllegalArgumentException.class, () -> BeamSearch.search(MARKOV, 0, 3));
        assertThrows(IllegalArgumentException.class, () -> BeamSearch.search(MARKOV, 3, 0));
        assertThrows(IllegalStateException.class, () -> BeamSearch.search(prefixes -> new float[0][], 3, 3));
    }
}
