package io.kgqa.procedures.linking;

import java.util.ArrayList;
import java.util.List;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;

/**
 * A name followed at once by a name it is related to in the KG ("charlotte north carolina", "ontario canada",
 * "ithaca ny"): people write a place with its region, a thing with what it belongs to, and the second says which
 * of the first is meant. The first stands, only those of its namesakes the second is related to; the second is
 * dropped, as the question is about the first. A qualifier is not much narrower than what it qualifies: a
 * title many people hold is no qualifier's subject ("president john f kennedy" names a man after his title, and
 * the man is kept), while a big city may have more facts than its state ("chicago illinois").
 */
final class Qualifiers {

    /** Relationships read from the less connected of two entities to find an edge between them, at most. */
    static final int MAX_READ = 20_000;
    /**
     * A second name with fewer than 1/this of the first's relationships is no qualifier of it: a title many hold
     * has many times the facts of one holder, while a big city has at most a few times those of its region.
     */
    static final int QUALIFIER_NARROWER = 4;

    private Qualifiers() {
    }

    /** {@code chosen} (best first) without the qualifying names and the namesakes they rule out. */
    static List<Candidate> apply(List<Candidate> chosen) {
        List<Candidate> out = new ArrayList<>(chosen);
        for (Candidate first : chosen) {
            if (!out.contains(first)) {
                continue;
            }
            List<Candidate> namesakes = new ArrayList<>();
            List<Candidate> next = new ArrayList<>();
            for (Candidate c : out) {
                if (c.start == first.start && c.end == first.end) {
                    namesakes.add(c);
                } else if (c.start == first.end) {
                    next.add(c);
                }
            }
            List<Candidate> qualified = new ArrayList<>();
            for (Candidate c : namesakes) {
                if (next.stream().anyMatch(q -> QUALIFIER_NARROWER * q.degree >= c.degree && related(c, q))) {
                    qualified.add(c);
                }
            }
            if (!qualified.isEmpty()) {
                out.removeAll(next);
                out.removeIf(c -> namesakes.contains(c) && !qualified.contains(c));
            }
        }
        return out;
    }

    /** Whether one relationship joins the two entities (either way). */
    static boolean related(Candidate a, Candidate b) {
        if (a.node == null || b.node == null || a.node.equals(b.node)) {
            return false;
        }
        Node from = a.degree <= b.degree ? a.node : b.node;
        Node to = from.equals(a.node) ? b.node : a.node;
        int read = 0;
        for (Relationship r : from.getRelationships()) {
            if (r.getOtherNode(from).equals(to)) {
                return true;
            }
            if (++read >= MAX_READ) {
                break;
            }
        }
        return false;
    }
}
