package io.kgqa.procedures.subgraphrag;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ChainSelectionTest {

    // Relations: 0 starred, 1 written, 2 directed. Nodes: 0 topic film, 1 and 2 its actors, 4 its director,
    // 5 and 6 its writers, 7 another film of actor 1.
    //   t0: 0 -starred-> 1    -2
    //   t1: 0 -starred-> 2    -2
    //   t2: 0 -directed-> 4    2
    //   t3: 0 -written-> 5     4   (the single best triple, over-rated)
    //   t4: 0 -written-> 6    -4   (its chain's other triple)
    //   t5: 7 -starred-> 1     1
    private static final int[] HEADS = {0, 0, 0, 0, 0, 7};
    private static final int[] TAILS = {1, 2, 4, 5, 6, 1};
    private static final int[] RELATIONS = {0, 0, 2, 1, 1, 0};
    private static final float[] SCORES = {-2f, -2f, 2f, 4f, -4f, 1f};
    private static final boolean[] TOPIC = {true, false, false, false, false, false, false, false};

    @Test
    void theChainWithTheBestMeanWinsOverTheBestSingleTriple() {
        List<ChainSelection.Chain> chains = ChainSelection.rank(HEADS, TAILS, RELATIONS, SCORES, TOPIC, 1);
        assertEquals(3, chains.size());
        ChainSelection.Chain best = chains.get(0);
        assertArrayEquals(new int[]{2}, best.relations());
        assertEquals(4, best.walks().get(0).end());
        assertEquals(2.0, best.score(), 1e-9);
        // written: the mean of 4 and -4 is 0; its ends keep their own walk order
        ChainSelection.Chain written = chains.get(1);
        assertArrayEquals(new int[]{1}, written.relations());
        assertEquals(0.0, written.score(), 1e-9);
        assertEquals(List.of(5, 6), written.walks().stream().map(PathSelection.Walk::end).toList());
        // the best single walk (the walk ranking) ends at the over-rated writer
        assertEquals(5, PathSelection.bestWalks(HEADS, TAILS, SCORES, TOPIC, 1).get(0).end());
    }

    @Test
    void chainsFollowTriplesBothWaysAndNeverEnterTheTopic() {
        List<ChainSelection.Chain> chains = ChainSelection.rank(HEADS, TAILS, RELATIONS, SCORES, TOPIC, 2);
        // starred> then starred<: from actor 1 back over t5 to film 7 (film 0 is the topic, so not an end)
        assertEquals(1, chains.size());
        ChainSelection.Chain chain = chains.get(0);
        assertArrayEquals(new int[]{0, 0}, chain.relations());
        assertArrayEquals(new boolean[]{true, false}, chain.forward());
        assertEquals(List.of(7), chain.walks().stream().map(PathSelection.Walk::end).toList());
        assertArrayEquals(new int[]{0, 5}, chain.walks().get(0).triples());
        // a walk never goes straight back over the triple it came by: film 7 leads on to nothing new
        assertTrue(ChainSelection.rank(HEADS, TAILS, RELATIONS, SCORES, TOPIC, 3).isEmpty());
        assertTrue(ChainSelection.rank(HEADS, TAILS, RELATIONS, SCORES, new boolean[8], 1).isEmpty());
    }

    @Test
    void aWalkThatMustNotGoBackUsesTheBestOtherArrival() {
        // topic 0 reaches 1 over t0 (5) or t1 (1), both relation 0; 1 -t2-> 2 (relation 1); 3 -t3-> 2
        // (relation 1). Node 2 has one arrival (t2), so at depth 3 it may go on over t3 to 3 but not back
        // over t2 to 1.
        int[] heads = {0, 0, 1, 3};
        int[] tails = {1, 1, 2, 2};
        int[] relations = {0, 0, 1, 1};
        float[] scores = {5f, 1f, 3f, 2f};
        boolean[] topic = {true, false, false, false};
        // depth 2: 0 =rel0> 1 =rel1> 2; then 2 <rel1= 3 at depth 3
        List<ChainSelection.Chain> two = ChainSelection.rank(heads, tails, relations, scores, topic, 2);
        assertEquals(1, two.size());
        assertArrayEquals(new int[]{0, 2}, two.get(0).walks().get(0).triples());
        // the chain (rel0>, rel1>, rel1<) ends at 3 only: going back over t2 to 1 is not allowed
        List<ChainSelection.Chain> three = ChainSelection.rank(heads, tails, relations, scores, topic, 3);
        assertEquals(List.of(3), three.get(0).walks().stream().map(PathSelection.Walk::end).toList());
        assertArrayEquals(new int[]{0, 2, 3}, three.get(0).walks().get(0).triples());
    }

    @Test
    void aWalkNeverComesBackToAnEntityItPassed() {
        // topic film 0 directed by 1; 1 wrote and directed film 2 (t1 written, t2 directed); 2 has genre 3.
        // X -directed-> 1 <-written- 2 -directed-> 1 would answer the director himself: not a walk.
        int[] heads = {0, 2, 2, 2};
        int[] tails = {1, 1, 1, 3};
        int[] relations = {2, 1, 2, 3};
        float[] scores = {5f, 4f, 9f, 1f};
        boolean[] topic = {true, false, false, false};
        List<ChainSelection.Chain> three = ChainSelection.rank(heads, tails, relations, scores, topic, 3);
        assertEquals(List.of(3, 3), three.stream().map(c -> c.walks().get(0).end()).toList());
        assertTrue(three.stream().allMatch(c -> c.walks().size() == 1));
    }

    @Test
    void theFirstChainIsKeptWholeAndLaterOnesFillK() {
        List<ChainSelection.Chain> chains = ChainSelection.rank(HEADS, TAILS, RELATIONS, SCORES, TOPIC, 1);
        // k = 1: the best chain's one walk, nothing else fits
        assertEquals(List.of(0), ChainSelection.walksWithin(chains, 1).stream().map(ChainSelection.Ranked::chain)
                .toList());
        // k = 3: then written (two walks), then starred does not fit
        assertEquals(List.of(0, 1, 1), ChainSelection.walksWithin(chains, 3).stream()
                .map(ChainSelection.Ranked::chain).toList());
        assertThrows(IllegalArgumentException.class, () -> ChainSelection.walksWithin(chains, 0));
        assertThrows(IllegalArgumentException.class,
                () -> ChainSelection.rank(HEADS, TAILS, RELATIONS, SCORES, TOPIC, 0));
        assertThrows(IllegalArgumentException.class,
                () -> ChainSelection.rank(HEADS, TAILS, new int[]{0}, SCORES, TOPIC, 1));
    }
}
