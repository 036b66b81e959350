package io.kgqa.procedures.triplets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The ordering algorithm on its own, without a database: quick and exhaustive. */
class TripletOrderingTest {

    private static Triplet t(String head, String relation, String tail) {
        return new Triplet(head, relation, tail);
    }

    private static List<Triplet> triplets(List<TripletOrdering.Ranked> ranked) {
        return ranked.stream().map(TripletOrdering.Ranked::triplet).toList();
    }

    private static List<Integer> distances(List<TripletOrdering.Ranked> ranked) {
        return ranked.stream().map(TripletOrdering.Ranked::distance).toList();
    }

    @Test
    void removesExactDuplicatesKeepingTheFirstOccurrence() {
        List<Triplet> input = List.of(
                t("A", "r", "B"), t("A", "s", "B"), t("A", "r", "B"), t("B", "r", "A"), t("A", "s", "B"));
        List<TripletOrdering.Ranked> out = TripletOrdering.dedupOrder(input, List.of("A"));
        // Same ends with another relation, or reversed, is a different fact.
        assertEquals(List.of(t("A", "r", "B"), t("A", "s", "B"), t("B", "r", "A")), triplets(out));
    }

    @Test
    void ordersByBreadthFirstDistanceIgnoringDirection() {
        List<Triplet> input = List.of(t("C", "r", "D"), t("C", "r", "B"), t("B", "r", "A"));
        List<TripletOrdering.Ranked> out = TripletOrdering.dedupOrder(input, List.of("A"));
        assertEquals(List.of(t("B", "r", "A"), t("C", "r", "B"), t("C", "r", "D")), triplets(out));
        assertEquals(List.of(0, 1, 2), distances(out));
    }

    @Test
    void tiesKeepInputOrder() {
        List<Triplet> input = List.of(
                t("B", "x", "C"), t("A", "r1", "B"), t("B", "y", "D"), t("A", "r2", "E"), t("E", "z", "F"),
                t("G", "r3", "A"));
        List<TripletOrdering.Ranked> out = TripletOrdering.dedupOrder(input, List.of("A"));
        assertEquals(List.of(
                t("A", "r1", "B"), t("A", "r2", "E"), t("G", "r3", "A"),
                t("B", "x", "C"), t("B", "y", "D"), t("E", "z", "F")), triplets(out));
        assertEquals(List.of(0, 0, 0, 1, 1, 1), distances(out));
    }

    @Test
    void handlesCyclesAndSelfLoops() {
        List<Triplet> input = List.of(
                t("C", "r", "D"), t("B", "r", "C"), t("C", "r", "A"), t("A", "r", "B"), t("D", "loop", "D"),
                t("A", "loop", "A"));
        List<TripletOrdering.Ranked> out = TripletOrdering.dedupOrder(input, List.of("A"));
        assertEquals(List.of(
                t("C", "r", "A"), t("A", "r", "B"), t("A", "loop", "A"),
                t("C", "r", "D"), t("B", "r", "C"),
                t("D", "loop", "D")), triplets(out));
        assertEquals(List.of(0, 0, 0, 1, 1, 2), distances(out));
    }

    @Test
    void severalTopicEntitiesTakeTheNearest() {
        List<Triplet> input = List.of(t("X", "r", "Y"), t("A", "r", "B"), t("B", "r", "C"), t("C", "r", "Y"));
        List<TripletOrdering.Ranked> out = TripletOrdering.dedupOrder(input, List.of("A", "X", "nowhere"));
        assertEquals(List.of(t("X", "r", "Y"), t("A", "r", "B"), t("B", "r", "C"), t("C", "r", "Y")), triplets(out));
        assertEquals(List.of(0, 0, 1, 1), distances(out));
    }

    @Test
    void disconnectedTripletsGoLastInInputOrder() {
        List<Triplet> input = List.of(t("P", "r", "Q"), t("B", "r", "C"), t("Q", "r", "R"), t("A", "r", "B"));
        List<TripletOrdering.Ranked> out = TripletOrdering.dedupOrder(input, List.of("A"));
        assertEquals(List.of(t("A", "r", "B"), t("B", "r", "C"), t("P", "r", "Q"), t("Q", "r", "R")), triplets(out));
        assertEquals(List.of(0, 1, -1, -1), distances(out));
    }

    @Test
    void unknownOrNoTopicEntitiesKeepInputOrderAfterDedup() {
        List<Triplet> input = List.of(t("C", "r", "D"), t("A", "r", "B"), t("C", "r", "D"));
        for (List<String> topics : List.of(List.<String>of(), List.of("Z"), List.of("r"))) {
            // "r" is a relation name, not an entity: relations are edges, never BFS nodes.
            List<TripletOrdering.Ranked> out = TripletOrdering.dedupOrder(input, topics);
            assertEquals(List.of(t("C", "r", "D"), t("A", "r", "B")), triplets(out), "topics " + topics);
            assertEquals(List.of(-1, -1), distances(out), "topics " + topics);
        }
    }

    @Test
    void emptyInputGivesEmptyOutput() {
        assertTrue(TripletOrdering.dedupOrder(List.of(), List.of("A")).isEmpty());
        assertTrue(TripletOrdering.dedupOrder(List.of(), List.of()).isEmpty());
    }

    @Test
    void matchesAReferenceImplementationOnRandomGraphs() {
        Random random = new Random(20240611L);
        for (int round = 0; round < 300; round++) {
            int entities = 1 + random.nextInt(12);
            List<Triplet> input = new ArrayList<>();
            int size = random.nextInt(30);
            for (int i = 0; i < size; i++) {
                input.add(t("e" + random.nextInt(entities), "r" + random.nextInt(3), "e" + random.nextInt(entities)));
            }
            List<String> topics = new ArrayList<>();
            for (int i = random.nextInt(3); i > 0; i--) {
                topics.add("e" + random.nextInt(entities + 2)); // sometimes an entity in no triplet
            }
            List<TripletOrdering.Ranked> expected = reference(input, topics);
            List<TripletOrdering.Ranked> actual = TripletOrdering.dedupOrder(input, topics);
            assertEquals(expected, actual, "round " + round + " input " + input + " topics " + topics);
        }
    }

    /** Straightforward version of the specification: map-based BFS, then a stable sort. */
    private static List<TripletOrdering.Ranked> reference(List<Triplet> input, Collection<String> topics) {
        List<Triplet> unique = new ArrayList<>(new LinkedHashSet<>(input));
        Map<String, List<String>> adjacency = new HashMap<>();
        for (Triplet tr : unique) {
            adjacency.computeIfAbsent(tr.head(), k -> new ArrayList<>()).add(tr.tail());
            adjacency.computeIfAbsent(tr.tail(), k -> new ArrayList<>()).add(tr.head());
        }
        Map<String, Integer> dist = new HashMap<>();
        ArrayDeque<String> queue = new ArrayDeque<>();
        for (String topic : topics) {
            if (adjacency.containsKey(topic) && !dist.containsKey(topic)) {
                dist.put(topic, 0);
                queue.add(topic);
            }
        }
        while (!queue.isEmpty()) {
            String node = queue.poll();
            for (String next : adjacency.get(node)) {
                if (!dist.containsKey(next)) {
                    dist.put(next, dist.get(node) + 1);
                    queue.add(next);
                }
            }
        }
        List<TripletOrdering.Ranked> ranked = new ArrayList<>();
        for (Triplet tr : unique) {
            int d = Math.min(dist.getOrDefault(tr.head(), Integer.MAX_VALUE), dist.getOrDefault(tr.tail(), Integer.MAX_VALUE));
            ranked.add(new TripletOrdering.Ranked(tr, d == Integer.MAX_VALUE ? -1 : d));
        }
        // List.sort is stable; unreachable (-1) sorts last.
        ranked.sort((a, b) -> Integer.compare(sortKey(a.distance()), sortKey(b.distance())));
        return ranked;
    }

    private static int sortKey(int distance) {
        return distance < 0 ? Integer.MAX_VALUE : distance;
    }
}
