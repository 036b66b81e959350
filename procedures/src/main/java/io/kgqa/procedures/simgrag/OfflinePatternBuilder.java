package io.kgqa.procedures.simgrag;

import io.kgqa.procedures.util.BadArgumentException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A SimGRAG pattern graph from a question without an LLM, for any KG: the linked entities are the known nodes,
 * the words that name a relation of the KG (see {@link RelationMentions}) are the edges, and the node at the far
 * end of the chain is the one asked for.
 *
 * <p>How a question becomes a chain, in English and with nothing learned from a benchmark:
 * <ul>
 *   <li>A word names a relation when its evidence is at least {@link #MIN_EVIDENCE} and beats every other
 *       relation by {@link #MIN_MARGIN} ("movies" is close to every film relation, so it names none).</li>
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
 */
public final class OfflinePatternBuilder {

    static final double MIN_EVIDENCE = 0.55;
    static final double MIN_MARGIN = 0.08;
    static final int CUE_WINDOW = 3;
    static final Set<String> STOP = Set.of(("a an the of in on at to for from by with about as is are was were be been"
            + " being do does did done has have had having what which who whom whose when where why how that this"
            + " these those it its it's their there they them he she his her i me my we our you your can could would"
            + " should will shall may might must both and or any some few many much more most one ones s give tell"
            + " list name show find please whats who's whos").split(" "));
    static final Set<String> CUES = Set.of("share", "shares", "shared", "sharing", "same", "together", "common",
            "along", "alongside", "also", "co");
    /** Words that ask for more of the topic's own kind: with a one-hop chain they make it a round trip. */
    static final Set<String> SAMENESS = Set.of("other", "others", "else", "another", "besides");
    private static final Set<String> COORDINATION = Set.of("and", "or", "both", "&", "as", "well");
    private static final String[] AGENT = {"or", "ors", "er", "ers", "ist", "ists"};
    private static final Pattern TOKEN = Pattern.compile("[\\p{L}\\p{N}']+(?:-[\\p{L}\\p{N}']+)*");

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

    /** Mean evidence over its three best relations at which a word that names none is the KG's subject kind. */
    static final double SUBJECT_EVIDENCE = 0.55;
    /** Evidence at which the asked-for word names a relation, given a clear margin over the next one. */
    static final double ASKED_EVIDENCE = 0.35;
    private static final Set<String> ASKING = Set.of("which", "what", "list", "name", "show", "give", "find");
    private static final Set<String> DETERMINERS = Set.of("of", "the", "a", "an", "all");

    private record Token(String text, int entity) {
        boolean word() {
            return entity < 0 && !text.equals("co-");
        }
    }

    private record Mention(int pos, String relation, double evidence, boolean bound) {
    }

    private record Group(List<Mention> mentions, int hops) {
        String relation() {
            return mentions.get(0).relation();
        }
    }

    private final RelationMentions relations;
    private final Map<String, String> relationTexts = new LinkedHashMap<>();

    OfflinePatternBuilder(RelationMentions relations) {
        this.relations = relations;
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
            throw new BadArgumentException("question: no entity of the KG found in '" + question
                    + "'; a pattern needs at least one (mark it with [brackets])");
        }
        List<Token> tokens = tokens(question, entities);
        List<String> notes = new ArrayList<>();
        List<Mention> mentions = mentions(tokens, notes);
        List<Group> groups = groups(tokens, mentions, entities.size() == 1);
        // "the films by the director of X": what the KG describes, by the entity's neighbour, is a round trip
        for (int g = 0; g < groups.size(); g++) {
            Group group = groups.get(g);
            if (group.hops() == 1 && group.mentions().stream().anyMatch(m -> m.bound() && thingsBy(tokens, m.pos()))) {
                groups.set(g, new Group(group.mentions(), 2));
                notes.add("'" + tokens.get(group.mentions().get(0).pos()).text()
                        + "' follows what the KG describes: a round trip");
            }
        }
        int[] entityPos = new int[entities.size()];
        for (int i = 0; i < entities.size(); i++) {
            entityPos[i] = position(tokens, i);
        }
        // each group goes to its nearest entity
        List<List<Group>> own = new ArrayList<>();
        for (int i = 0; i < entities.size(); i++) {
            own.add(new ArrayList<>());
        }
        for (Group g : groups) {
            int nearest = agentOf(tokens, g);
            // "what did X direct in 1957": a year has no directed_by, so the word is X's, not the year's
            if (nearest >= 0 && entities.size() > 1 && !incident.test(nearest, g.relation())) {
                nearest = -1;
            }
            if (nearest < 0) {
                nearest = 0;
                for (int i = 1; i < entities.size(); i++) {
                    if (distance(g, entityPos[i]) < distance(g, entityPos[nearest])) {
                        nearest = i;
                    }
                }
            }
            own.get(nearest).add(g);
        }
        List<List<String>> chains = new ArrayList<>();
        for (int i = 0; i < entities.size(); i++) {
            chains.add(chain(tokens, own.get(i), entityPos[i]));
        }
        // "the other films by the director of X": the hop bound to the entity goes out and back
        List<Group> first = own.get(0);
        if (entities.size() == 1 && !first.isEmpty()
                && tokens.stream().anyMatch(t -> t.entity() < 0 && SAMENESS.contains(t.text()))) {
            Group head = first.stream().min(Comparator.comparingInt((Group g) -> rank(tokens, g, entityPos[0])[0])
                    .thenComparingInt(g -> rank(tokens, g, entityPos[0])[1])).get();
            if (head.hops() == 1) {
                first.set(first.indexOf(head), new Group(head.mentions(), 2));
                chains.set(0, chain(tokens, first, entityPos[0]));
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
        String masked = masked(tokens);
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
                if (coordinated(tokens, entityPos[i], entityPos[lead]) && !leadChain.isEmpty()
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
        Asked asked = asked(tokens);
        if (asked != null) {
            notes.add("asks for " + (asked.head() ? "what the relations describe" : "the " + asked.relation()
                    + " of something") + " ('" + asked.word() + "')");
        }
        return new Built(edges, "UNKNOWN answer", asked, notes);
    }

    /** Whether "<things> by/of/from/for [the]" comes right before {@code pos} and "of" right after it. */
    private boolean thingsBy(List<Token> tokens, int pos) {
        // the entity's neighbour ("the director of X", "X's director"), not the entity named by its role
        // ("the writer X")
        boolean ofEntity = pos + 1 < tokens.size() && tokens.get(pos + 1).text().equals("of");
        boolean possessive = pos >= 1 && tokens.get(pos - 1).entity() >= 0;
        if (!ofEntity && !possessive) {
            return false;
        }
        if (possessive) {
            pos--; // "<things> by X's director": the words before the entity
        }
        int j = pos - 1;
        if (j >= 0 && tokens.get(j).word() && DETERMINERS.contains(tokens.get(j).text())
                && !tokens.get(j).text().equals("of")) {
            j--;
        }
        if (j < 1 || !tokens.get(j).word() || !Set.of("by", "of", "from", "for").contains(tokens.get(j).text())) {
            return false;
        }
        Token things = tokens.get(j - 1);
        if (!things.word() || STOP.contains(things.text())) {
            return false;
        }
        Asked role = role(things.text());
        return role != null && role.head();
    }

    /** The relation's readable text, as pattern edges carry it. */
    String relationText(String relation) {
        return relationTexts.get(relation);
    }

    /**
     * The word after the first "which"/"what" (articles skipped): none when an auxiliary follows ("what did
     * ... do") or an entity. A question without such a word says nothing here: its first noun is as often
     * what it starts from ("the movie X, when was it released") as what it asks for.
     */
    Asked asked(List<Token> tokens) {
        int start = -1;
        for (int i = 0; i < tokens.size() && start < 0; i++) {
            if (tokens.get(i).entity() < 0 && ASKING.contains(tokens.get(i).text())) {
                start = i + 1;
            }
        }
        if (start < 0) {
            return null;
        }
        for (int i = start; i < tokens.size(); i++) {
            Token t = tokens.get(i);
            if (t.entity() >= 0) {
                return null;
            }
            if (!t.word() || DETERMINERS.contains(t.text()) || SAMENESS.contains(t.text())) {
                continue;
            }
            if (STOP.contains(t.text()) || CUES.contains(t.text()) || ASKING.contains(t.text())) {
                return null;
            }
            return role(t.text());
        }
        return null;
    }

    private Asked role(String word) {
        List<Map.Entry<String, Double>> ranked = new ArrayList<>(relations.scores(word).entrySet());
        ranked.sort((a, b) -> Double.compare(b.getValue(), a.getValue()));
        if (ranked.isEmpty()) {
            return null;
        }
        double first = ranked.get(0).getValue();
        double second = ranked.size() > 1 ? ranked.get(1).getValue() : -1;
        // The head noun of the wh-phrase names either a relation's tail or the KG's subjects, so a weaker but
        // clear preference is enough here ("what types are ...": has_genre 0.39, the next 0.31).
        if (first >= ASKED_EVIDENCE && first - second >= MIN_MARGIN) {
            return new Asked(word, ranked.get(0).getKey());
        }
        int n = Math.min(3, ranked.size());
        double mean = ranked.subList(0, n).stream().mapToDouble(Map.Entry::getValue).sum() / n;
        return n >= 2 && mean >= SUBJECT_EVIDENCE ? new Asked(word, null) : null;
    }

    private PatternGraph.RawEdge edge(String from, String relation, String to, String masked) {
        return relation.equals(BRIDGE) ? new PatternGraph.RawEdge(from, masked, to, true)
                : new PatternGraph.RawEdge(from, relationTexts.get(relation), to);
    }

    // ----------------------------------------------------------------------------------------------- pieces

    private static List<Token> tokens(String question, List<Entity> entities) {
        List<String> words = words(question);
        List<Token> tokens = new ArrayList<>();
        for (String w : words) {
            tokens.add(new Token(w, -1));
        }
        for (int e = 0; e < entities.size(); e++) {
            List<String> span = words(entities.get(e).span());
            int at = find(tokens, span);
            if (at < 0) {
                // the span is not in the question as words (linked from a bracket or a given name): at the end
                tokens.add(new Token("", e));
                continue;
            }
            for (int j = 0; j < span.size(); j++) {
                tokens.remove(at);
            }
            tokens.add(at, new Token("", e));
        }
        // "co-writers": a sharing cue and a word
        List<Token> out = new ArrayList<>();
        for (Token t : tokens) {
            if (t.entity() < 0 && t.text().startsWith("co-") && t.text().length() > 3) {
                out.add(new Token("co-", -1));
                out.add(new Token(t.text().substring(3), -1));
            } else {
                out.add(t);
            }
        }
        return out;
    }

    static List<String> words(String text) {
        List<String> out = new ArrayList<>();
        Matcher m = TOKEN.matcher(text.replace('[', ' ').replace(']', ' ').toLowerCase(Locale.ROOT));
        while (m.find()) {
            String w = m.group();
            if (w.endsWith("'s")) {
                w = w.substring(0, w.length() - 2);
            }
            w = w.replace("'", "");
            if (!w.isEmpty()) {
                out.add(w);
            }
        }
        return out;
    }

    private static int find(List<Token> tokens, List<String> span) {
        if (span.isEmpty()) {
            return -1;
        }
        outer:
        for (int i = 0; i + span.size() <= tokens.size(); i++) {
            for (int j = 0; j < span.size(); j++) {
                Token t = tokens.get(i + j);
                if (t.entity() >= 0 || !t.text().equals(span.get(j))) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static int position(List<Token> tokens, int entity) {
        for (int i = 0; i < tokens.size(); i++) {
            if (tokens.get(i).entity() == entity) {
                return i;
            }
        }
        return tokens.size();
    }

    private List<Mention> mentions(List<Token> tokens, List<String> notes) {
        List<Mention> out = new ArrayList<>();
        for (int i = 0; i < tokens.size(); i++) {
            Token t = tokens.get(i);
            if (!t.word() || STOP.contains(t.text()) || CUES.contains(t.text()) || t.text().chars().allMatch(Character::isDigit)
                    || conjunction(tokens, i)) {
                continue;
            }
            Map<String, Double> scores = relations.scores(t.text());
            String best = null;
            double first = -2;
            double second = -2;
            for (Map.Entry<String, Double> e : scores.entrySet()) {
                if (e.getValue() > first) {
                    second = first;
                    first = e.getValue();
                    best = e.getKey();
                } else if (e.getValue() > second) {
                    second = e.getValue();
                }
            }
            if (best != null && first >= MIN_EVIDENCE && first - Math.max(second, -1) >= MIN_MARGIN) {
                out.add(new Mention(i, best, first, false));
                notes.add(String.format(Locale.ROOT, "'%s' names %s (%.2f)", t.text(), best, first));
            }
        }
        // a word bound to an entity: an agent noun next to it, or a modifier right after it
        List<Mention> marked = new ArrayList<>();
        for (Mention m : out) {
            marked.add(new Mention(m.pos(), m.relation(), m.evidence(), bound(tokens, out, m)));
        }
        return marked;
    }

    /** "well" in "as well (as)" joins, it names nothing (a KG whose questions say "how good" puts it near a rating). */
    private static boolean conjunction(List<Token> tokens, int i) {
        return tokens.get(i).text().equals("well") && i > 0 && tokens.get(i - 1).text().equals("as");
    }

    private static boolean bound(List<Token> tokens, List<Mention> mentions, Mention m) {
        int i = m.pos();
        String w = tokens.get(i).text();
        boolean agent = endsWithAny(w, AGENT) || (endsWithAny(w, new String[] {"s"}) && endsWithAny(w.substring(0,
                w.length() - 1), AGENT));
        if (i > 0 && tokens.get(i - 1).entity() >= 0) {
            if (agent) {
                return true;
            }
            if (i + 1 < tokens.size()) {
                Token next = tokens.get(i + 1);
                boolean nextIsMention = mentions.stream().anyMatch(x -> x.pos() == i + 1);
                return next.word() && !STOP.contains(next.text()) && !nextIsMention;
            }
            return false;
        }
        if (!agent) {
            return false;
        }
        for (int j = i + 1; j < tokens.size() && j <= i + 4; j++) {
            if (tokens.get(j).entity() >= 0) {
                return true;
            }
            int jj = j;
            if (mentions.stream().anyMatch(x -> x.pos() == jj)) {
                return false;
            }
        }
        return false;
    }

    private static boolean endsWithAny(String w, String[] suffixes) {
        for (String s : suffixes) {
            if (w.endsWith(s) && w.length() > s.length() + 2) {
                return true;
            }
        }
        return false;
    }

    /** @param cuesMakeRoundTrips false with several entities: "both", "together" then join them, not a hop back */
    private static List<Group> groups(List<Token> tokens, List<Mention> mentions, boolean cuesMakeRoundTrips) {
        List<List<Mention>> runs = new ArrayList<>();
        for (Mention m : mentions) {
            List<Mention> last = runs.isEmpty() ? null : runs.get(runs.size() - 1);
            if (last != null && last.get(last.size() - 1).relation().equals(m.relation())) {
                last.add(m);
            } else {
                runs.add(new ArrayList<>(List.of(m)));
            }
        }
        boolean[] cue = new boolean[runs.size()];
        for (int c = 0; c < tokens.size(); c++) {
            String t = tokens.get(c).text();
            if (tokens.get(c).entity() >= 0 || !(CUES.contains(t) || t.equals("co-"))) {
                continue;
            }
            int best = -1;
            int bestDistance = Integer.MAX_VALUE;
            for (int g = 0; g < runs.size(); g++) {
                int cc = c;
                int d = runs.get(g).stream().mapToInt(m -> Math.abs(m.pos() - cc)).min().orElse(Integer.MAX_VALUE);
                if (d <= CUE_WINDOW && d < bestDistance) {
                    bestDistance = d;
                    best = g;
                }
            }
            if (best >= 0 && cuesMakeRoundTrips) {
                cue[best] = true;
            }
        }
        // "who acted with X", "who worked with X": a relation word and "with" the entity is a shared relation
        for (int c = 1; c + 1 < tokens.size() && cuesMakeRoundTrips; c++) {
            if (tokens.get(c).entity() < 0 && tokens.get(c).text().equals("with") && tokens.get(c + 1).entity() >= 0) {
                for (int g = 0; g < runs.size(); g++) {
                    int before = c - 1;
                    if (runs.get(g).stream().anyMatch(m -> m.pos() == before)) {
                        cue[g] = true;
                    }
                }
            }
        }
        List<Group> out = new ArrayList<>();
        for (int g = 0; g < runs.size(); g++) {
            List<Mention> run = runs.get(g);
            boolean roundTrip = (run.size() > 1 && run.stream().anyMatch(Mention::bound)) || cue[g];
            out.add(new Group(run, roundTrip ? 2 : 1));
        }
        return out;
    }

    private static final Set<String> ATTACHING = Set.of("by", "in", "of", "from", "with", "for", "on");

    /** The entity a word's preposition points at ("directed by [the] X", "released in X"), else -1. */
    private static int agentOf(List<Token> tokens, Group g) {
        for (Mention m : g.mentions()) {
            int j = m.pos() + 1;
            if (j < tokens.size() && tokens.get(j).entity() < 0 && ATTACHING.contains(tokens.get(j).text())) {
                j++;
                if (j < tokens.size() && tokens.get(j).text().equals("the")) {
                    j++;
                }
                if (j < tokens.size() && tokens.get(j).entity() >= 0) {
                    return tokens.get(j).entity();
                }
            }
        }
        return -1;
    }

    private static int distance(Group g, int pos) {
        return g.mentions().stream().mapToInt(m -> Math.abs(m.pos() - pos)).min().orElse(Integer.MAX_VALUE);
    }

    /** The relations of the hops leaving an entity at {@code pos}, in order (see the class comment). */
    private static List<String> chain(List<Token> tokens, List<Group> groups, int pos) {
        List<Group> ordered = new ArrayList<>(groups);
        ordered.sort(Comparator.comparingInt((Group g) -> rank(tokens, g, pos)[0])
                .thenComparingInt(g -> rank(tokens, g, pos)[1]));
        List<String> out = new ArrayList<>();
        for (Group g : ordered) {
            for (int h = 0; h < g.hops(); h++) {
                out.add(g.relation());
            }
        }
        return out;
    }

    private static int[] rank(List<Token> tokens, Group g, int pos) {
        if (g.mentions().stream().anyMatch(m -> m.bound() && m.pos() > pos)) {
            return new int[] {0, 0}; // "the Kismet actors", "Kismet directed films"
        }
        if (g.mentions().stream().anyMatch(m -> m.pos() < pos && (m.bound() || pointsAt(tokens, m, pos)))) {
            return new int[] {1, 0}; // "the director of Kismet", "films written by Kismet"
        }
        if (g.mentions().stream().anyMatch(m -> m.pos() == pos + 1)) {
            return new int[] {2, 0}; // "the films Kismet starred in"
        }
        int left = g.mentions().stream().filter(m -> m.pos() < pos).mapToInt(m -> pos - m.pos()).min().orElse(-1);
        if (left >= 0) {
            return new int[] {3, left};
        }
        return new int[] {4, g.mentions().stream().mapToInt(m -> m.pos() - pos).min().orElse(0)};
    }

    /** Whether a word reaches the entity at {@code pos} through a preposition ("written by [the] X"). */
    private static boolean pointsAt(List<Token> tokens, Mention m, int pos) {
        int j = m.pos() + 1;
        if (j >= tokens.size() || !ATTACHING.contains(tokens.get(j).text())) {
            return false;
        }
        j++;
        if (j < tokens.size() && tokens.get(j).text().equals("the")) {
            j++;
        }
        return j == pos;
    }

    private static boolean coordinated(List<Token> tokens, int a, int b) {
        int lo = Math.min(a, b);
        int hi = Math.max(a, b);
        if (hi - lo < 2) {
            return false;
        }
        for (int i = lo + 1; i < hi; i++) {
            if (!COORDINATION.contains(tokens.get(i).text())) {
                return false;
            }
        }
        return true;
    }

    /** The question without its entities, for ranking relations when no word names one. */
    private static String masked(List<Token> tokens) {
        StringBuilder out = new StringBuilder();
        for (Token t : tokens) {
            if (t.entity() < 0) {
                out.append(out.length() > 0 ? " " : "").append(t.text().equals("co-") ? "co" : t.text());
            }
        }
        return out.length() > 0 ? out.toString() : "related to";
    }
}
