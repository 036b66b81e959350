package io.kgqa.procedures.frag;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PersonalizedPageRankTest {

    @Test
    void oneIterationByHand() {
        // a path 0 - 1 - 2 from source 0, damping 0.5: start (0.5, 0, 0);
        // after one step: 0 gets 0.5 + 0.5 * 0 = 0.5, 1 gets 0.5 * 0.5 / 1 = 0.25, 2 gets 0
        double[] once = PersonalizedPageRank.scores(3, new int[]{0, 1}, new int[]{1, 2}, new int[]{0}, 0.5, 1, 0);
        assertArrayEquals(new double[]{0.5, 0.25, 0.0}, once, 1e-12);
    }

    @Test
    void convergesToTheFixedPoint() {
        // the same path, iterated to convergence: x0 = 0.5 + 0.5 * x1 / 2, x1 = 0.5 * x0 + 0.5 * x2, x2 = 0.5 * x1 / 2
        double[] s = PersonalizedPageRank.scores(3, new int[]{0, 1}, new int[]{1, 2}, new int[]{0}, 0.5, 1000, 1e-12);
        assertEquals(0.5 + 0.25 * s[1], s[0], 1e-9);
        assertEquals(0.5 * s[0] + 0.5 * s[2], s[1], 1e-9);
        assertEquals(0.25 * s[1], s[2], 1e-9);
        assertTrue(s[0] > s[1] && s[1] > s[2]);
    }

    @Test
    void nodesNearTheSourcesRankFirst() {
        // a star around 0 plus a far chain 3 - 4 - 5; sources 0: the star's leaves beat the far chain
        int[] from = {0, 0, 0, 3, 4};
        int[] to = {1, 2, 3, 4, 5};
        double[] s = PersonalizedPageRank.scores(6, from, to, new int[]{0}, 0.8, 1000, 1e-9);
        assertArrayEquals(new int[]{0, 3, 1, 2}, PersonalizedPageRank.top(s, 4));
        assertEquals(6, PersonalizedPageRank.top(s, 100).length);
        assertEquals(0.0, PersonalizedPageRank.scores(2, new int[0], new int[0], new int[]{0}, 0.8, 5, 0)[1]);
    }

    @Test
    void argumentsAreChecked() {
        assertThrows(IllegalArgumentException.class,
                () -> PersonalizedPageRank.scores(2, new int[]{0}, new int[0], new int[]{0}, 0.8, 5, 0));
        assertThrows(IllegalArgumentException.class,
                () -> PersonalizedPageRank.scores(2, new int[]{0}, new int[]{1}, new int[]{0}, 1.0, 5, 0));
        assertThrows(IllegalArgumentException.class,
                () -> PersonalizedPageRank.scores(2, new int[]{0}, new int[]{1}, new int[]{0}, 0.8, 0, 0));
    }
}
