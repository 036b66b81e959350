package io.kgqa.procedures.triplets;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The SG-RAG "MOT" ordering: remove repeated triplets, then order the rest by breadth-first
 * distance from the topic entities. Pure and stateless, so the procedure and the unit tests share it.
 *
 * <p><b>Distance, precisely.</b> The triplets themselves form an undirected graph: every distinct
 * head or tail string is a node, every triplet an edge between its head and tail. For a node,
 * {@code dist(node)} is the number of hops on a shortest path from any topic entity
 * ({@code dist(topic) = 0}). For a triplet, {@code distance = min(dist(head), dist(tail))}: a triplet
 * touching a topic entity has distance 0, one that touches a neighbour of a topic entity has 1, and
 * so on. Triplets in a component with no topic entity (or with no known topic entity at all) have
 * no distance and go last.
 *
 * <p><b>Why this definition.</b>
 * <ul>
 *   <li>Undirected, because answering follows relations either way ("films Lee Pace starred in"
 *       walks {@code film -starred_actors-> Lee Pace} backwards).</li>
 *   <li>Over the triplets, not over the database, so the order depends only on what the LLM is shown:
 *       it is reproducible from the prompt, works for merged subgraphs of any retriever, and does
 *       not change when unrelated parts of the graph change.</li>
 *   <li>Minimum over the two endpoints, so a fact is placed as soon as the search frontier from the
 *       question reaches it; the prompt then reads from the topic entity outward, which is the
 *       point of MOT.</li>
 *   <li>Ties keep input order, so a retriever's own ranking (e.g. by score) survives within each
 *       distance layer.</li>
 * </ul>
 *
 * <p>Runs in O(n + t) time and memory for n triplets and t topic entities: one hash pass to
 * deduplicate and intern entity names, an array-based adjacency list, one BFS and one counting
 * sort. Cycles are harmless because BFS visits each node once.
 */
public final class TripletOrdering {

    /** Internal marker for "not connected to any topic entity"; the procedure turns it into null. */
    public static final int UNREACHABLE = -1;

    /** A triplet with its BFS distance ({@link #UNREACHABLE} if none), in output order. */
    public record Ranked(Triplet triplet, int distance) {
    }

    private TripletOrdering() {
    }

    /**
     * Deduplicates (first occurrence wins) and orders by distance from the topic entities, stable.
     *
     * @param triplets the facts, in the retriever's order
     * @param topicEntities entity names matched exactly against triplet heads and tails; names that
     *     occur in no triplet are ignored
     * @return the ordered, duplicate-free triplets with their distances
     */
    public static List<Ranked> dedupOrder(List<Triplet> triplets, Collection<String> topicEntities) {
        List<Triplet> unique = deduplicate(triplets);
        int tripletCount = unique.size();

        // Intern entity names as dense ints so the graph work below runs on arrays, not on maps.
        Map<String, Integer> entityIds = new HashMap<>(capacityFor(2 * tripletCount));
        int[] headIds = new int[tripletCount];
        int[] tailIds = new int[tripletCount];
        for (int i = 0; i < tripletCount; i++) {
            headIds[i] = intern(entityIds, unique.get(i).head());
            tailIds[i] = intern(entityIds, unique.get(i).tail());
        }
        int entityCount = entityIds.size();

        int[] entityDistance = breadthFirstDistances(
                entityCount, headIds, tailIds, topicIds(entityIds, topicEntities));

        int[] tripletDistance = new int[tripletCount];
        int maxDistance = UNREACHABLE;
        for (int i = 0; i < tripletCount; i++) {
            tripletDistance[i] = minKnown(entityDistance[headIds[i]], entityDistance[tailIds[i]]);
            maxDistance = Math.max(maxDistance, tripletDistance[i]);
        }

        return stableSortByDistance(unique, tripletDistance, maxDistance);
    }

    private static List<Triplet> deduplicate(List<Triplet> triplets) {
        Set<Triplet> seen = new HashSet<>(capacityFor(triplets.size()));
        List<Triplet> unique = new ArrayList<>(triplets.size());
        for (Triplet triplet : triplets) {
            if (seen.add(triplet)) {
                unique.add(triplet);
            }
        }
        return unique;
    }

    private static int intern(Map<String, Integer> ids, String name) {
        Integer id = ids.get(name);
        if (id == null) {
            id = ids.size();
            ids.put(name, id);
        }
        return id;
    }

    private static int[] topicIds(Map<String, Integer> entityIds, Collection<String> topicEntities) {
        int[] ids = new int[topicEntities.size()];
        int count = 0;
        for (String topic : topicEntities) {
            Integer id = entityIds.get(topic);
            if (id != null) {
                ids[count++] = id;
            }
        }
        return Arrays.copyOf(ids, count);
    }

    /** Multi-source BFS over the undirected head-tail graph; returns hops per entity or UNREACHABLE. */
    private static int[] breadthFirstDistances(int entityCount, int[] headIds, int[] tailIds, int[] sources) {
        // Compressed adjacency (CSR): neighbours of entity e are neighbours[offsets[e] .. offsets[e+1]).
        int[] offsets = new int[entityCount + 1];
        for (int i = 0; i < headIds.length; i++) {
            offsets[headIds[i] + 1]++;
            offsets[tailIds[i] + 1]++;
        }
        for (int e = 0; e < entityCount; e++) {
            offsets[e + 1] += offsets[e];
        }
        int[] neighbours = new int[offsets[entityCount]];
        int[] fill = Arrays.copyOf(offsets, entityCount);
        for (int i = 0; i < headIds.length; i++) {
            neighbours[fill[headIds[i]]++] = tailIds[i];
            neighbours[fill[tailIds[i]]++] = headIds[i];
        }

        int[] distance = new int[entityCount];
        Arrays.fill(distance, UNREACHABLE);
        int[] queue = new int[entityCount];
        int queueHead = 0;
        int queueTail = 0;
        for (int source : sources) {
            if (distance[source] == UNREACHABLE) {
                distance[source] = 0;
                queue[queueTail++] = source;
            }
        }
        while (queueHead < queueTail) {
            int entity = queue[queueHead++];
            for (int k = offsets[entity]; k < offsets[entity + 1]; k++) {
                int next = neighbours[k];
                if (distance[next] == UNREACHABLE) {
                    distance[next] = distance[entity] + 1;
                    queue[queueTail++] = next;
                }
            }
        }
        return distance;
    }

    private static int minKnown(int a, int b) {
        if (a == UNREACHABLE) {
            return b;
        }
        if (b == UNREACHABLE) {
            return a;
        }
        return Math.min(a, b);
    }

    /** Counting sort on distance: O(n), stable, unreachable triplets in a last bucket. */
    private static List<Ranked> stableSortByDistance(List<Triplet> triplets, int[] distances, int maxDistance) {
        int unreachableBucket = maxDistance + 1;
        int[] bucketStart = new int[unreachableBucket + 2];
        for (int d : distances) {
            bucketStart[bucketOf(d, unreachableBucket) + 1]++;
        }
        for (int b = 0; b <= unreachableBucket; b++) {
            bucketStart[b + 1] += bucketStart[b];
        }
        Ranked[] ordered = new Ranked[triplets.size()];
        for (int i = 0; i < distances.length; i++) {
            int bucket = bucketOf(distances[i], unreachableBucket);
            ordered[bucketStart[bucket]++] = new Ranked(triplets.get(i), distances[i]);
        }
        return Collections.unmodifiableList(Arrays.asList(ordered));
    }

    private static int bucketOf(int distance, int unreachableBucket) {
        return distance == UNREACHABLE ? unreachableBucket : distance;
    }

    /** HashMap capacity that holds {@code expected} entries without rehashing. */
    private static int capacityFor(int expected) {
        return (int) Math.min(Integer.MAX_VALUE, (long) expected * 4 / 3 + 1);
    }
}
