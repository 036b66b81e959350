package io.kgqa.procedures.simgrag;

import io.kgqa.procedures.simgrag.OfflinePatternBuilder.Asked;
import io.kgqa.procedures.simgrag.PatternTokens.Token;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Which words of a question name a relation of the KG (see {@link RelationMentions}), which of them are bound to
 * an entity ("the writer of X", "X actors"), and what the question's wh-phrase asks for: the reading of single
 * words that {@link OfflinePatternBuilder} chains into a pattern.
 */
final class RelationWords {

    static final double MIN_EVIDENCE = 0.55;
    static final double MIN_MARGIN = 0.08;
    /** Mean evidence over its three best relations at which a word that names none is the KG's subject kind. */
    static final double SUBJECT_EVIDENCE = 0.55;
    /** Evidence at which the asked-for word names a relation, given a clear margin over the next one. */
    static final double ASKED_EVIDENCE = 0.35;
    static final Set<String> STOP = Set.of(("a an the of in on at to for from by with about as is are was were be been"
            + " being do does did done has have had having what which who whom whose when where why how that this"
            + " these those it its it's their there they them he she his her i me my we our you your can could would"
            + " should will shall may might must both and or any some few many much more most one ones s give tell"
            + " list name show find please whats who's whos").split(" "));
    static final Set<String> CUES = Set.of("share", "shares", "shared", "sharing", "same", "together", "common",
            "along", "alongside", "also", "co");
    /** Words that ask for more of the topic's own kind: with a one-hop chain they make it a round trip. */
    static final Set<String> SAMENESS = Set.of("other", "others", "else", "another", "besides");
    private static final String[] AGENT = {"or", "ors", "er", "ers", "ist", "ists"};
    private static final Set<String> ASKING = Set.of("which", "what", "list", "name", "show", "give", "find");
    private static final Set<String> DETERMINERS = Set.of("of", "the", "a", "an", "all");

    /** A word at {@code pos} that names {@code relation}; bound: an agent noun or modifier next to an entity. */
    record Mention(int pos, String relation, double evidence, boolean bound) {
    }

    private final RelationMentions relations;

    RelationWords(RelationMentions relations) {
        this.relations = relations;
    }

    /** The words that name a relation, each marked when bound to an entity; what each names goes to {@code notes}. */
    List<Mention> mentions(List<Token> tokens, List<String> notes) {
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

    /** Whether "<things> by/of/from/for [the]" comes right before {@code pos} and "of" right after it. */
    boolean thingsBy(List<Token> tokens, int pos) {
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

}
