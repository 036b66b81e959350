package io.kgqa.procedures.simgrag;

import io.kgqa.procedures.simgrag.HopChains.Group;
import io.kgqa.procedures.simgrag.PatternTokens.Token;
import io.kgqa.procedures.simgrag.RelationWords.Mention;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A SimGRAG pattern graph from a question without an LLM, for any KG: the linked entities are the known nodes,
 * the words that name a relation of the KG (see {@link RelationMentions}) are the edges, and the node at the far
 * end of the chain is the one asked for.
 *
 * <p>How a question becomes a chain, in English and with nothing learned from a benchmark:
 * <ul>
 *   <li>A word names a relation when its evidence is at least {@link RelationWords#MIN_EVIDENCE} and beats every
 *       other relation by {@link RelationWords#MIN_MARGIN} ("movies" is close to every film relation, so it names
 *       none).</li>
 *   <li>Neighbouring words that name the same relation are one hop ("what year was X released"), unless one of
 *       them is bound to the entity (an agent noun "the writer of X", "X actors", or a modifier "X directed
 *       films"): then the group is a round trip, out to the entity's neighbour and back ("films written by the
 *       writer of X"). A sharing cue next to a group ("share", "same", "co-", "also", "together") makes it a
 *       round trip too ("films that share directors with X"), and so does "with" the entity right after the
 *       word ("who acted with X").</li>
 *   <li>Hops leave the entity in this order: a word bound to it, then words before it (nearest first), then words
 *       after it (nearest first): "who directed the films written by X" is X -written- ? -directed- answer.</li>
 *   <li>Several entities: each takes the words nearest to it; the entity with the longest chain leads, and each
 *       other entity's chain ends at the lead chain's node as deep as its own chain is long (an entity joined to
 *       another by "and" shares its first relation; one with no words of its own is tied by any relation).</li>
 *   <li>No relation word at all: one edge that ranks every relation of the KG by its distance to the question.</li>
 * </ul>
 *
 * <p>{@link PatternTokens} reads the question's words, {@link RelationWords} which of them name relations,
 * {@link HopChains} how they group into hops; this class chains the hops of every entity into one pattern.
 */
public final class OfflinePatternBuilder {

    /** A linked entity: its pattern node text and the words of the question it was linked from. */
    public record Entity(String node, String span) {
    }

    /** The pattern, which of its nodes is asked for, what the question asks for (null: not said), and why. */
    public record Built(List<PatternGraph.RawEdge> edges, String answer, Asked asked, List<String> notes) {
    }

    /**
     * What the question's wh-phrase asks for. {@code relation} non-null: the tail of that relation ("which
     * actors": starred_actors, "what years": release_year). Null: the things the KG's relations describe, their
     * heads ("which movies": a word close to many relations and naming none of them).
     */
    public record Asked(String word, String relation) {
        boolean head() {
            return relation == null;
        }
    }

    private final RelationWords relationWords;
    private final Map<String, String> relationTexts = new LinkedHashMap<>();

    OfflinePatternBuilder(RelationMentions relations) {
        this.relationWords = new RelationWords(relations);
        for (RelationMentions.Relation r : relations.relations()) {
            relationTexts.put(r.name(), r.text());
        }
    }

    /** A hop of any relation, ranked by the question. */
    private static final String BRIDGE = "";

    /**
     * @param incident whether entity i (its index in {@code entities}) has a relationship of a type
     */
    public Built build(String question, List<Entity> entities, java.util.function.BiPredicate<Integer, String> incident) {
        if (entities.isEmpty()) {
            // TopicEntities refuses a question without one before a pattern is built
            throw new IllegalArgumentException("a pattern needs at least one entity");
        }
        List<Token> tokens = PatternTokens.of(question, entities);
        List<String> notes = new ArrayList<>();
        List<Mention> mentions = relationWords.mentions(tokens, notes);
        List<Group> groups = HopChains.groups(tokens, mentions, entities.size() == 1);
        // "the films by the director of X": what the KG describes, by the entity's neighbour, is a round trip
        for (int g = 0; g < groups.size(); g++) {
            Group group = groups.get(g);
            if (group.hops() == 1 && group.mentions().stream().anyMatch(m -> m.bound() && relationWords.thingsBy(tokens, m.pos()))) {
                groups.set(g, new Group(group.mentions(), 2));
                notes.add("'" + tokens.get(group.mentions().get(0).pos()).text()
                        + "' follows what the KG describes: a round trip");
            }
        }
        int[] entityPos = new int[entities.size()];
        for (int i = 0; i < entities.size(); i++) {
            entityPos[i] = PatternTokens.position(tokens, i);
        }
        // each group goes to its nearest entity
        List<List<Group>> own = new ArrayList<>();
        for (int i = 0; i < entities.size(); i++) {
            own.add(new ArrayList<>());
        }
        for (Group g : groups) {
            int nearest = HopChains.agentOf(tokens, g);
            // "what did X direct in 1957": a year has no directed_by, so the word is X's, not the year's
            if (nearest >= 0 && entities.size() > 1 && !incident.test(nearest, g.relation())) {
                nearest = -1;
            }
            if (nearest < 0) {
                nearest = 0;
                for (int i = 1; i < entities.size(); i++) {
                    if (HopChains.distance(g, entityPos[i]) < HopChains.distance(g, entityPos[nearest])) {
                        nearest = i;
                    }
                }
            }
            own.get(nearest).add(g);
        }
        List<List<String>> chains = new ArrayList<>();
        for (int i = 0; i < entities.size(); i++) {
            chains.add(HopChains.chain(tokens, own.get(i), entityPos[i]));
        }
        // "the other films by the director of X": the hop bound to the entity goes out and back
        List<Group> first = own.get(0);
        if (entities.size() == 1 && !first.isEmpty()
                && tokens.stream().anyMatch(t -> t.entity() < 0 && RelationWords.SAMENESS.contains(t.text()))) {
            Group head = first.stream().min(Comparator.comparingInt((Group g) -> HopChains.rank(tokens, g, entityPos[0])[0])
                    .thenComparingInt(g -> HopChains.rank(tokens, g, entityPos[0])[1])).get();
            if (head.hops() == 1) {
                first.set(first.indexOf(head), new Group(head.mentions(), 2));
                chains.set(0, HopChains.chain(tokens, first, entityPos[0]));
                notes.add("'other/else': more of the topic's kind, a round trip");
            }
        }
        // a chain whose first relation never touches the entity misses a hop ("the Zakes Mokae movies")
        for (int i = 0; i < entities.size(); i++) {
            List<String> chain = chains.get(i);
            if (!chain.isEmpty() && !incident.test(i, chain.get(0))) {
                List<String> bridged = new ArrayList<>();
                bridged.add(BRIDGE);
                bridged.addAll(chain);
                chains.set(i, bridged);
                notes.add(entities.get(i).node() + " has no " + chain.get(0) + ": a hop to its own neighbours first");
            }
        }
        int lead = 0;
        for (int i = 1; i < entities.size(); i++) {
            if (chains.get(i).size() > chains.get(lead).size()) {
                lead = i;
            }
        }
        String masked = PatternTokens.masked(tokens);
        List<PatternGraph.RawEdge> edges = new ArrayList<>();
        List<String> leadChain = chains.get(lead);
        List<String> leadNodes = new ArrayList<>();
        leadNodes.add(entities.get(lead).node());
        if (leadChain.isEmpty()) {
            edges.add(new PatternGraph.RawEdge(entities.get(lead).node(), masked, "UNKNOWN answer", true));
            leadNodes.add("UNKNOWN answer");
            notes.add("no relation word: the relation is ranked by the whole question");
        } else {
            for (int h = 0; h < leadChain.size(); h++) {
                String next = h == leadChain.size() - 1 ? "UNKNOWN answer" : "UNKNOWN " + (h + 1);
                edges.add(edge(leadNodes.get(h), leadChain.get(h), next, masked));
                leadNodes.add(next);
            }
        }
        int fresh = leadNodes.size();
        for (int i = 0; i < entities.size(); i++) {
            if (i == lead) {
                continue;
            }
            List<String> chain = chains.get(i);
            boolean any = false;
            if (chain.isEmpty()) {
                if (HopChains.coordinated(tokens, entityPos[i], entityPos[lead]) && !leadChain.isEmpty()
                        && incident.test(i, leadChain.get(0))) {
                    chain = List.of(leadChain.get(0));
                } else {
                    any = true;
                    chain = List.of("");
                }
            }
            int depth = Math.min(chain.size(), leadNodes.size() - 1);
            String from = entities.get(i).node();
            for (int h = 0; h < chain.size(); h++) {
                boolean last = h == chain.size() - 1;
                String to = last ? leadNodes.get(depth) : "UNKNOWN " + (fresh++);
                edges.add(any ? new PatternGraph.RawEdge(from, masked, to, true) : edge(from, chain.get(h), to, masked));
                from = to;
            }
        }
        Asked asked = relationWords.asked(tokens);
        if (asked != null) {
            notes.add("asks for " + (asked.head() ? "what the relations describe" : "the " + asked.relation()
                    + " of something") + " ('" + asked.word() + "')");
        }
        return new Built(edges, "UNKNOWN answer", asked, notes);
    }

    /** The relation's readable text, as pattern edges carry it. */
    String relationText(String relation) {
        return relationTexts.get(relation);
    }

    private PatternGraph.RawEdge edge(String from, String relation, String to, String masked) {
        return relation.equals(BRIDGE) ? new PatternGraph.RawEdge(from, masked, to, true)
                : new PatternGraph.RawEdge(from, relationTexts.get(relation), to);
    }
}
