package io.kgqa.procedures.simgrag;

import io.kgqa.procedures.util.BadArgumentException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.neo4j.graphdb.Direction;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.RelationshipType;
import org.neo4j.graphdb.Transaction;

/**
 * Whether the best match answers with the kind of thing the question asks for ("which movies", "which actors",
 * "what years"), and when it does not, the pattern one step longer that does. A pattern built from relation
 * words is often one hop short: "which movies were made by the directors Fernandel worked with" names starred
 * and directed, and stops at the directors; the movies they made are one hop further, back over the relation
 * that reached them. "Which actors have been in Edward Burns films" stops at the films; the actors are one
 * starred_actors hop further.
 *
 * <p>Kinds are read from the KG's own relations, nothing is listed per KG: the tail of relation r is what
 * "the r of something" names; the heads of relations are the things the KG describes.
 */
final class AskedAnswer {

    private static final String PREVIOUS = "UNKNOWN reached";
    private static final String BETWEEN = "UNKNOWN between";

    /** A longer pattern and its matches. */
    record Retry(List<PatternGraph.RawEdge> edges, PatternGraph graph, List<SimGragSearch.ComponentMatch> matches) {
    }

    private AskedAnswer() {
    }

    static boolean fits(Node answer, OfflinePatternBuilder.Asked asked) {
        if (asked.head()) {
            return answer.getDegree(Direction.OUTGOING) > 0;
        }
        return answer.getDegree(RelationshipType.withName(asked.relation()), Direction.INCOMING) > 0;
    }

    /**
     * The longer pattern's matches when the best match's answer is not of the asked kind and the longer
     * pattern's best answer is; null otherwise (then the first matches stand).
     *
     * @param text relation name -> the text pattern edges carry
     */
    static Retry retry(Transaction tx, String kg, OfflinePatternBuilder.Built built, PatternGraph graph,
                       List<SimGragSearch.ComponentMatch> matches, Map<String, List<Node>> pins,
                       SimGragSearch.Settings settings, int maxEdges, Function<String, String> text) {
        OfflinePatternBuilder.Asked asked = built.asked();
        if (asked == null || matches.isEmpty()) {
            return null;
        }
        SimGragSearch.ComponentMatch best = bestWithAnswer(matches, graph, built.answer());
        if (best == null) {
            return null;
        }
        Node answer = answerOf(best, graph, built.answer());
        if (fits(answer, asked)) {
            return null;
        }
        List<List<PatternGraph.RawEdge>> tries = new ArrayList<>();
        List<PatternGraph.RawEdge> shorter = shortened(built.edges(), built.answer(), asked, text);
        if (shorter != null) {
            tries.add(shorter);
        }
        List<PatternGraph.RawEdge> longer = extended(built.edges(), built.answer(), asked, answer,
                lastRelation(best, answer), text);
        if (longer != null) {
            tries.add(longer);
        }
        for (List<PatternGraph.RawEdge> edges : tries) {
            PatternGraph other;
            try {
                other = PatternGraph.of(edges, maxEdges);
            } catch (BadArgumentException tooLong) {
                continue;
            }
            List<SimGragSearch.ComponentMatch> again = SimGragSearch.run(tx, kg, other, pins, settings);
            SimGragSearch.ComponentMatch bestAgain = bestWithAnswer(again, other, built.answer());
            if (bestAgain != null && fits(answerOf(bestAgain, other, built.answer()), asked)) {
                return new Retry(edges, other, again);
            }
        }
        return null;
    }

    /**
     * {@code edges} without the last hop when that hop is the asked relation taken a second time ("what years did
     * X release films": out to the year and back to its films): its head becomes the answer. Null otherwise.
     */
    static List<PatternGraph.RawEdge> shortened(List<PatternGraph.RawEdge> edges, String answerNode,
                                                OfflinePatternBuilder.Asked asked, Function<String, String> text) {
        if (asked.head() || edges.size() < 2) {
            return null;
        }
        List<PatternGraph.RawEdge> touching = edges.stream()
                .filter(e -> e.head().equals(answerNode) || e.tail().equals(answerNode)).toList();
        String relation = text.apply(asked.relation());
        if (touching.size() != 1 || !touching.get(0).tail().equals(answerNode) || relation == null
                || !relation.equals(touching.get(0).relation())) {
            return null;
        }
        String before = touching.get(0).head();
        if (!PatternGraph.isVariable(before)
                || edges.stream().noneMatch(e -> e != touching.get(0) && relation.equals(e.relation())
                && (e.head().equals(before) || e.tail().equals(before)))) {
            return null;
        }
        List<PatternGraph.RawEdge> out = new ArrayList<>();
        for (PatternGraph.RawEdge e : edges) {
            if (e != touching.get(0)) {
                out.add(new PatternGraph.RawEdge(e.head().equals(before) ? answerNode : e.head(), e.relation(),
                        e.tail().equals(before) ? answerNode : e.tail(), e.anyRelation()));
            }
        }
        return out;
    }

    /**
     * {@code edges} with the answer renamed and one hop (or two) added after it: back over the relation that
     * reached it when the question asks for what relations describe; over the asked relation when the answer
     * has it; else back over the relation that reached it and then over the asked one. Null when neither applies.
     */
    static List<PatternGraph.RawEdge> extended(List<PatternGraph.RawEdge> edges, String answerNode,
                                               OfflinePatternBuilder.Asked asked, Node answer, String lastRelation,
                                               Function<String, String> text) {
        List<PatternGraph.RawEdge> out = new ArrayList<>();
        for (PatternGraph.RawEdge e : edges) {
            out.add(new PatternGraph.RawEdge(e.head().equals(answerNode) ? PREVIOUS : e.head(), e.relation(),
                    e.tail().equals(answerNode) ? PREVIOUS : e.tail(), e.anyRelation()));
        }
        if (asked.head()) {
            if (lastRelation == null) {
                return null;
            }
            out.add(new PatternGraph.RawEdge(PREVIOUS, text.apply(lastRelation), answerNode));
        } else if (answer.getDegree(RelationshipType.withName(asked.relation()), Direction.OUTGOING) > 0) {
            out.add(new PatternGraph.RawEdge(PREVIOUS, text.apply(asked.relation()), answerNode));
        } else {
            if (lastRelation == null) {
                return null;
            }
            out.add(new PatternGraph.RawEdge(PREVIOUS, text.apply(lastRelation), BETWEEN));
            out.add(new PatternGraph.RawEdge(BETWEEN, text.apply(asked.relation()), answerNode));
        }
        return out.stream().anyMatch(e -> e.relation() == null) ? null : out;
    }

    private static SimGragSearch.ComponentMatch bestWithAnswer(List<SimGragSearch.ComponentMatch> matches,
                                                               PatternGraph graph, String answerNode) {
        for (SimGragSearch.ComponentMatch m : matches) {
            if (answerOf(m, graph, answerNode) != null) {
                return m; // matches come best first within each component
            }
        }
        return null;
    }

    private static Node answerOf(SimGragSearch.ComponentMatch m, PatternGraph graph, String answerNode) {
        for (int i = 0; i < graph.nodes.size(); i++) {
            if (graph.nodes.get(i).text().equals(answerNode)) {
                return i < m.match().binding().size() ? m.match().binding().get(i) : null;
            }
        }
        return null;
    }

    /** The relation of the last matched edge that touches the answer. */
    private static String lastRelation(SimGragSearch.ComponentMatch m, Node answer) {
        String last = null;
        for (PatternMatcher.MatchedEdge<Node> e : m.match().edges()) {
            if (answer.equals(e.head()) || answer.equals(e.tail())) {
                last = e.type();
            }
        }
        return last;
    }
}
