package io.kgqa.procedures.linking;

import io.kgqa.procedures.linking.LinkText.Token;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.neo4j.graphdb.Node;

/**
 * Places each full-text hit back on the words of the question that name it: the same letters (spaced or
 * not), a few typos, the name without its common words, or a surname alone. The index only says a name
 * shares words with the question; this says which words, and how well they match.
 */
final class HitAlignment {

    private HitAlignment() {
    }

    /** A full-text hit of this KG, best first. */
    record Hit(Node node, String id, String name, int degree, List<String> types) {
    }

    /** A span of the question as compared with a name: normalised words, with and without spaces. */
    record Window(int start, int end, String spaced) {
    }

    /** Each full-text hit placed on the span of the question it matches best, if one matches closely. */
    static List<Candidate> align(List<Hit> hits, List<Token> tokens) {
        return align(hits, tokens, word -> false, word -> false);
    }

    /**
     * @param common whether a (normalised) word is in so many of the KG's names that it does not pick one out:
     *     a span that names a hit's other words ("Microsoft" for "Microsoft Corporation") names the hit
     * @param english whether a (normalised) word is a common English word: typed in lower case, it is that word
     */
    static List<Candidate> align(List<Hit> hits, List<Token> tokens, Predicate<String> common,
                                 Predicate<String> english) {
        Map<String, Window> windows = new HashMap<>();
        Map<Integer, List<String>> byLength = new HashMap<>();
        Map<String, Window> singulars = new HashMap<>();
        for (LinkText.Span span : LinkText.spans(tokens)) {
            int i = span.start();
            int j = span.end();
            StringBuilder spaced = new StringBuilder();
            for (int k = i; k < j; k++) {
                String norm = tokens.get(k).norm();
                if (!norm.isEmpty()) {
                    if (spaced.length() > 0) {
                        spaced.append(' ');
                    }
                    spaced.append(norm);
                }
            }
            List<String> forms = new ArrayList<>(List.of(spaced.toString()));
            String bare = NameSimilarity.withoutPossessive(LinkText.stripPunctEnd(tokens.get(j - 1).text()));
            if (bare != null && spaced.toString().endsWith(" s")) { // "wayne s world s" -> "wayne s world"
                forms.add(spaced.substring(0, spaced.length() - 2));
            }
            for (String form : forms) {
                String squeezed = form.replace(" ", "");
                // the first (leftmost, shortest) span with these letters stands for them
                if (!squeezed.isEmpty() && !windows.containsKey(squeezed)) {
                    windows.put(squeezed, new Window(i, j, form));
                    byLength.computeIfAbsent(LinkText.length(squeezed), n -> new ArrayList<>()).add(squeezed);
                }
            }
            // "actors" for a name the index holds in the singular but not as typed ("Actor-GB"); the exact
            // lookups find the singulars of names stored as said
            for (String singular : NameSimilarity.singulars(spaced.toString())) {
                singulars.putIfAbsent(singular.replace(" ", ""), new Window(i, j, singular));
            }
        }
        List<Candidate> out = new ArrayList<>();
        List<String> spacedNames = hits.stream().map(h -> " " + LinkText.nameWords(h.name()) + " ").toList();
        for (Hit hit : hits) {
            String spacedTarget = LinkText.nameWords(hit.name());
            String target = spacedTarget.replace(" ", "");
            if (target.isEmpty()) {
                continue;
            }
            Window found = windows.get(target);
            double quality;
            String how;
            Window plural = found == null ? singulars.get(target) : null;
            if (found != null) {
                quality = found.spaced().equals(spacedTarget) ? LinkScoring.FULLTEXT_MATCH : LinkScoring.SQUEEZED_MATCH;
                how = "fulltext";
            } else if (plural != null && plural.spaced().equals(spacedTarget)) {
                found = plural;
                quality = LinkScoring.SINGULAR_MATCH;
                how = "singular";
            } else {
                int[] targetPoints = target.codePoints().toArray();
                int length = targetPoints.length;
                int bound = NameSimilarity.allowedEdits(length);
                Set<Integer> letters = new HashSet<>();
                for (int cp : targetPoints) {
                    letters.add(cp);
                }
                int bestDistance = -1;
                String bestWindow = null;
                for (int n = length - bound; n <= length + bound; n++) {
                    for (String window : byLength.getOrDefault(n, List.of())) {
                        int[] points = window.codePoints().toArray();
                        // cheap necessary conditions first: a typo rarely hits both ends of a name, and each
                        // edit changes at most two letters of the alphabet used
                        if ((points[0] != targetPoints[0] && points[points.length - 1] != targetPoints[length - 1])
                                || NameSimilarity.alphabetDifference(letters, points) > 2 * bound) {
                            continue;
                        }
                        int d = NameSimilarity.editDistance(points, targetPoints, bound);
                        if (d <= bound && (bestWindow == null || d < bestDistance)) {
                            bestDistance = d;
                            bestWindow = window;
                        }
                    }
                }
                if (bestWindow == null) {
                    Candidate head = head(hit, spacedTarget, windows, common);
                    if (head == null) {
                        // a part no other name has, before a surname alone: it is spelt exactly, where a
                        // surname may be misspelt (this order linked more topics first on the tune questions)
                        head = distinctive(hit, spacedTarget, windows, tokens, spacedNames, common, english);
                    }
                    if (head == null) {
                        head = famousPrefix(hit, spacedTarget, windows, tokens, hits, spacedNames, english);
                    }
                    Candidate partial = head == null ? partial(hit, spacedTarget, tokens) : head;
                    // a common word typed in lower case is that word: "the lead singer" is not Bryan Singer (a
                    // short first name before it says a person: "abe lincoln")
                    if (partial != null && !("partial".equals(partial.how) && LinkText.typedCommon(tokens.get(partial.start),
                            english))) {
                        out.add(partial);
                    }
                    continue;
                }
                found = windows.get(bestWindow);
                // ... and a correctly spelt one is not a typo of a name: "movie" is not "B movie", and "the
                // united states have" is not "United States Navy"
                if ((found.end() - found.start() == 1 && LinkText.typedCommon(tokens.get(found.start()), english))
                        || wordForWord(found, spacedTarget, tokens, english)) {
                    continue;
                }
                quality = 1 - LinkScoring.EDIT_PENALTY * bestDistance / length;
                how = "fuzzy";
            }
            out.add(new Candidate(hit.node(), hit.id(), hit.name(), found.start(), found.end(), how, quality,
                    hit.degree(), hit.types()));
        }
        return out;
    }

    /**
     * Whether a span matched with typos says another word in place of one of the name's: a common English word
     * typed as such, more than one edit from the name's word where they stand word for word.
     */
    static boolean wordForWord(Window found, String spacedTarget, List<Token> tokens, Predicate<String> english) {
        List<String> said = LinkText.split(found.spaced());
        List<String> named = LinkText.split(spacedTarget);
        if (said.size() != named.size() || found.end() - found.start() != said.size()) {
            return false;
        }
        for (int k = 0; k < said.size(); k++) {
            if (!said.get(k).equals(named.get(k)) && LinkText.typedCommon(tokens.get(found.start() + k), english)
                    && NameSimilarity.editDistance(said.get(k), named.get(k), 1) > 1) {
                return true;
            }
        }
        return false;
    }

    /**
     * A name said without its common words: "Microsoft" for "Microsoft Corporation", "Portuguese" for
     * "Portuguese Language" (words many of the KG's names share say little about which one is meant). The
     * rest of the name, in order, must be a span of the question. Null when it is not, or when nothing is left.
     */
    static Candidate head(Hit hit, String spacedTarget, Map<String, Window> windows, Predicate<String> common) {
        List<String> words = LinkText.split(spacedTarget);
        List<String> rest = new ArrayList<>();
        for (String w : words) {
            if (!common.test(w) && !LinkText.MINOR.contains(w)) {
                rest.add(w);
            }
        }
        // a number left alone is a value the question states ("in 1980"), not "1980 Summer Olympics"
        if (rest.isEmpty() || rest.size() == words.size() || rest.stream().allMatch(LinkText::isDigits)) {
            return null;
        }
        Window found = windows.get(String.join("", rest));
        if (found == null || !found.spaced().equals(String.join(" ", rest))) {
            return null;
        }
        return new Candidate(hit.node(), hit.id(), hit.name(), found.start(), found.end(), "head",
                LinkScoring.HEAD_MATCH, hit.degree(), hit.types());
    }

    /**
     * A name said by a part no other name shares: "Facebook" for "Facebook, Inc.", "Verizon" for "Verizon
     * Communications", "red sox" for "Boston Red Sox". The part is the longest run of the name's words that a
     * span of the question says, that holds a word few of the KG's names have (so that the full-text hits,
     * which are every name with the question's words, show all its other holders), and that no other hit's
     * name contains. A common English word typed in lower case is that word, not a name. Null when no part
     * does.
     */
    static Candidate distinctive(Hit hit, String spacedTarget, Map<String, Window> windows, List<Token> tokens,
                                 List<String> spacedNames, Predicate<String> common, Predicate<String> english) {
        List<String> words = LinkText.split(spacedTarget);
        String own = " " + spacedTarget + " ";
        for (int length = words.size() - 1; length >= 1; length--) {
            for (int a = 0; a + length <= words.size(); a++) {
                List<String> run = words.subList(a, a + length);
                // a part starts and ends on words of its own: "of Belle" is not a part of "The Magic of Belle Isle"
                if (LinkText.MINOR.contains(run.get(0)) || LinkText.MINOR.contains(run.get(run.size() - 1))) {
                    continue;
                }
                boolean rare = run.stream().anyMatch(w -> w.length() >= MIN_DISTINCTIVE_LETTERS && !common.test(w)
                        && !LinkText.MINOR.contains(w) && !LinkText.isDigits(w));
                if (!rare) {
                    continue;
                }
                String spaced = String.join(" ", run);
                Window found = windows.get(String.join("", run));
                if (found == null || !found.spaced().equals(spaced)) {
                    continue;
                }
                if (found.end() - found.start() == 1 && LinkText.typedCommon(tokens.get(found.start()), english)) {
                    continue;
                }
                String part = " " + spaced + " ";
                boolean shared = spacedNames.stream().anyMatch(n -> !n.equals(own) && n.contains(part));
                if (!shared) {
                    return new Candidate(hit.node(), hit.id(), hit.name(), found.start(), found.end(), "distinctive",
                            LinkScoring.DISTINCTIVE_MATCH, hit.degree(), hit.types());
                }
            }
        }
        return null;
    }

    /**
     * A name said by its first words, which other names share, when it is by far the best connected of those
     * that have them: "united states" for "United States of America" (8,641 facts, the next "United States
     * Dollar" 4,749). People shorten a
     * famous name so; a rarer holder needs the rest of its name. At least {@value #MIN_PREFIX_WORDS} words, not a
     * year alone; the entity must have at least
     * {@link #FAME_MARGIN} times the relationships of every other hit that holds those words, and be a value
     * many entities share ({@link SpanResolver#SHARED_VALUE_DEGREE}). Null when no first words are so said.
     */
    static Candidate famousPrefix(Hit hit, String spacedTarget, Map<String, Window> windows, List<Token> tokens,
                                  List<Hit> hits, List<String> spacedNames, Predicate<String> english) {
        if (hit.degree() < SpanResolver.SHARED_VALUE_DEGREE) {
            return null;
        }
        List<String> words = LinkText.split(spacedTarget);
        String own = " " + spacedTarget + " ";
        // one word is too little: a first name ("nicole" of "Nicole Kidman" in "anna nicole smith"), a year
        for (int length = words.size() - 1; length >= MIN_PREFIX_WORDS; length--) {
            List<String> run = words.subList(0, length);
            if (LinkText.MINOR.contains(run.get(0)) || LinkText.MINOR.contains(run.get(length - 1))
                    || run.stream().allMatch(LinkText::isDigits)) {
                continue;
            }
            String spaced = String.join(" ", run);
            Window found = windows.get(String.join("", run));
            if (found == null || !found.spaced().equals(spaced)
                    || (found.end() - found.start() == 1 && LinkText.typedCommon(tokens.get(found.start()), english))) {
                continue;
            }
            String part = " " + spaced + " ";
            boolean famous = true;
            for (int i = 0; i < hits.size() && famous; i++) {
                String other = spacedNames.get(i);
                famous = other.equals(own) || !other.contains(part)
                        || hit.degree() >= FAME_MARGIN * hits.get(i).degree();
            }
            if (famous) {
                return new Candidate(hit.node(), hit.id(), hit.name(), found.start(), found.end(), "prefix",
                        LinkScoring.PREFIX_MATCH, hit.degree(), hit.types());
            }
        }
        return null;
    }

    /** Words a famous name must be said by at least. */
    static final int MIN_PREFIX_WORDS = 2;
    /** How many times the relationships of every other holder of its first words a famous name needs. */
    static final double FAME_MARGIN = 1.5;

    /**
     * A part of a name is not distinctive when another entity is named by those very words ("Belle" is a film
     * of its own, besides "The Magic of Belle Isle"): such parts are dropped. The full-text hits need not hold
     * that entity (the exact lookup found it), so this is checked on every candidate found.
     */
    static void dropPartsThatAreNames(java.util.Collection<Candidate> candidates) {
        Set<List<Integer>> named = new HashSet<>();
        for (Candidate c : candidates) {
            if (WHOLE_NAME.contains(c.how)) {
                named.add(List.of(c.start, c.end));
            }
        }
        candidates.removeIf(c -> ("distinctive".equals(c.how) || "prefix".equals(c.how))
                && named.contains(List.of(c.start, c.end)));
    }

    /**
     * How a candidate's span says its entity's whole name (spelt or cased otherwise). Not a singular: "braves"
     * says the very words of "Atlanta Braves", and "Brave" only once its plural is undone.
     */
    private static final Set<String> WHOLE_NAME = Set.of("exact", "fulltext", "fuzzy");

    /**
     * A plural that another name holds as typed ("braves" of "Atlanta Braves", said without its common or other
     * words) names that one before the singular it also spells ("Brave"): the singular's match drops to
     * {@link LinkScoring#SINGULAR_BESIDE_PLURAL_NAME}, below a name said by its part. Replaces those candidates
     * in place, keeping their order.
     */
    static <K> void pluralsNameTheirHolders(Map<K, Candidate> candidates) {
        Set<List<Integer>> parts = new HashSet<>();
        for (Candidate c : candidates.values()) {
            if ("head".equals(c.how) || "distinctive".equals(c.how)) {
                parts.add(List.of(c.start, c.end));
            }
        }
        candidates.replaceAll((key, c) -> "singular".equals(c.how) && parts.contains(List.of(c.start, c.end))
                && c.match > LinkScoring.SINGULAR_BESIDE_PLURAL_NAME
                ? new Candidate(c.node, c.id, c.name, c.start, c.end, c.how, LinkScoring.SINGULAR_BESIDE_PLURAL_NAME,
                        c.degree, c.types)
                : c);
    }

    /** Letters a word needs to pick a name out alone: shorter ones ("al", "de") belong to too many. */
    static final int MIN_DISTINCTIVE_LETTERS = 3;

    /**
     * A person named by the last word of their name, possibly misspelt ("Herzog", "Hitchcok"): the hit's name
     * must read like a person's (two to four capitalised words, not starting with an article or a minor word),
     * and one word of the question must match its last word. Null when none does.
     */
    /**
     * A name that reads like a person's: two to four capitalised words, none of them minor ("State of Play" is
     * a film). Stricter than {@link #partial}'s test, which lets a minor word inside ("Catherine of Aragon").
     */
    static boolean personLike(String name) {
        List<String> nameWords = LinkText.split(name);
        List<String> normWords = LinkText.split(LinkText.normalize(name));
        if (nameWords.size() < 2 || nameWords.size() > 4 || normWords.size() != nameWords.size()) {
            return false;
        }
        for (int k = 0; k < nameWords.size(); k++) {
            if (!LinkText.startsUpper(nameWords.get(k)) || LinkText.MINOR.contains(normWords.get(k))) {
                return false;
            }
        }
        return true;
    }

    static Candidate partial(Hit hit, String spacedTarget, List<Token> tokens) {
        List<String> nameWords = LinkText.split(hit.name());
        List<String> normWords = LinkText.split(spacedTarget);
        if (nameWords.size() < 2 || nameWords.size() > 4 || normWords.size() != nameWords.size()
                || LinkText.MINOR.contains(normWords.get(0))) {
            return null;
        }
        for (String w : nameWords) {
            if (!LinkText.startsUpper(w)) {
                return null;
            }
        }
        String surname = normWords.get(normWords.size() - 1);
        int[] last = surname.codePoints().toArray();
        if (last.length < 4 || LinkText.isDigits(surname)) {
            return null;
        }
        int bound = NameSimilarity.allowedEdits(last.length);
        int bestToken = -1;
        int bestDistance = bound + 1;
        for (int k = 0; k < tokens.size(); k++) {
            String norm = tokens.get(k).norm();
            if (norm.isEmpty() || norm.contains(" ")) {
                continue;
            }
            int[] points = norm.codePoints().toArray();
            if (points[0] != last[0]) {
                continue;
            }
            int d = NameSimilarity.editDistance(points, last, bound);
            if (d < bestDistance) {
                bestDistance = d;
                bestToken = k;
            }
        }
        if (bestToken < 0) {
            return null;
        }
        // "abe lincoln", "ben franklin": a first name said short keeps its first letters
        if (bestToken > 0 && bestDistance == 0) {
            String first = tokens.get(bestToken - 1).norm();
            String given = normWords.get(0);
            if (LinkText.length(first) >= 3 && first.length() < given.length() && !first.contains(" ")
                    && given.startsWith(first.substring(0, 2))) {
                return new Candidate(hit.node(), hit.id(), hit.name(), bestToken - 1, bestToken + 1, "short",
                        LinkScoring.SHORT_FIRST_NAME_MATCH - LinkScoring.PARTIAL_EXTRA_WORD * (nameWords.size() - 2),
                        hit.degree(), hit.types());
            }
        }
        // the fewer words around the surname, the likelier a person ("Werner Herzog", not "Portrait Werner Herzog")
        return new Candidate(hit.node(), hit.id(), hit.name(), bestToken, bestToken + 1, "partial",
                LinkScoring.PARTIAL_MATCH - LinkScoring.PARTIAL_EXTRA_WORD * (nameWords.size() - 2)
                        - LinkScoring.EDIT_PENALTY * bestDistance / last.length,
                hit.degree(), hit.types());
    }
}
