package io.kgqa.procedures.linking;

import io.kgqa.procedures.linking.EntityLinker.Link;
import io.kgqa.procedures.linking.LinkText.Token;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Chooses among scored candidates: best first, no two chosen spans overlapping, no entity twice, weak
 * leftovers dropped. Entities of one name on one span (a tag and a person) are twins and share a place.
 */
final class SpanResolver {

    /** Entities that share one span of the question ("ringo lam" the tag, "Ringo Lam" the person), at most. */
    static final int MAX_TWINS = 3;
    /** Other entities the words of a link may name, reported beside it, at most. */
    static final int MAX_ALTERNATIVES = 3;
    /**
     * An entity this many facts touch is a value many entities share (a genre, a language, a country): said
     * exactly, it states a constraint ("horror films by X"), however short its name.
     */
    static final int SHARED_VALUE_DEGREE = 100;
    /** Scores that differ only past this decimal tie: the span's length, the degree and the name decide. */
    private static final int RANKED_DECIMALS = 3;
    private static final int REPORTED_DECIMALS = 4;

    private SpanResolver() {
    }

    static List<Link> resolve(List<Candidate> candidates, List<Token> tokens, int maxEntities) {
        return resolve(candidates, tokens, maxEntities, LinkScoring.SECONDARY_RATIO);
    }

    /**
     * @param candidates in the order they were found: a tie that survives every key keeps it (a stable sort)
     * @param secondaryRatio a further span must score this share of the best one (0: every one)
     */
    static List<Link> resolve(List<Candidate> candidates, List<Token> tokens, int maxEntities, double secondaryRatio) {
        return resolve(candidates, tokens, maxEntities, secondaryRatio, Double.NaN);
    }

    /**
     * @param learnedFloor NaN when {@code score} is the hand score; else {@code score} is the learned scorer's
     *     probability, which orders the candidates and must reach this floor, while the hand score
     *     ({@link Candidate#thresholdScore}) still decides the further entities (its floor, ratio and twins)
     */
    static List<Link> resolve(List<Candidate> candidates, List<Token> tokens, int maxEntities, double secondaryRatio,
                              double learnedFloor) {
        boolean learned = !Double.isNaN(learnedFloor);
        List<Candidate> ordered = new ArrayList<>(candidates);
        Map<Candidate, Double> rounded = new HashMap<>();
        for (Candidate c : candidates) {
            rounded.put(c, round(c.score, RANKED_DECIMALS));
        }
        ordered.sort((x, y) -> {
            double rx = rounded.get(x);
            double ry = rounded.get(y);
            if (rx != ry) {
                return rx > ry ? -1 : 1;
            }
            int byLength = Integer.compare(y.end - y.start, x.end - x.start);
            if (byLength != 0) {
                return byLength;
            }
            int byDegree = Integer.compare(y.degree, x.degree);
            return byDegree != 0 ? byDegree : BY_CODE_POINT.compare(x.name, y.name);
        });
        List<Candidate> chosen = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        int spans = 0; // maxEntities counts spans of the question: twins share their span's place
        for (Candidate c : ordered) {
            // the learned scorer's first pick needs only its floor: it may be a name the hand score thought weak
            boolean below = learned ? c.score < learnedFloor
                    || !chosen.isEmpty() && c.thresholdScore() < LinkScoring.MIN_SCORE
                    : c.score < LinkScoring.MIN_SCORE;
            if (below) {
                continue;
            }
            // A literal value or a shared value said exactly ("in 1987", "horror films") and a name typed with its
            // capitals are what the question states, not guesses: short ones score low, but they are kept beside
            // a stronger name.
            if (!chosen.isEmpty() && c.thresholdScore() < secondaryRatio * chosen.get(0).thresholdScore()
                    && !isLiteral(c) && !isSharedValue(c) && !isTypedName(c)) {
                continue;
            }
            if (seen.contains(c.id)) {
                continue;
            }
            // Same words, other entity ("ringo lam" the tag, "Ringo Lam" the person): both stand, best first.
            boolean twin = false;
            boolean overlaps = false;
            int twins = 0;
            for (Candidate o : chosen) {
                boolean sameName = o.start == c.start && o.end == c.end
                        && LinkText.nameWords(o.name).equals(LinkText.nameWords(c.name));
                twin |= sameName && c.thresholdScore() >= LinkScoring.TWIN_RATIO * o.thresholdScore();
                twins += sameName ? 1 : 0;
                overlaps |= c.start < o.end && o.start < c.end;
            }
            if (twin ? twins >= MAX_TWINS : overlaps || spans >= maxEntities) {
                continue;
            }
            chosen.add(c);
            seen.add(c.id);
            spans += twin ? 0 : 1;
        }
        chosen = LinkScoring.withoutRoleOfName(Qualifiers.apply(chosen), tokens);
        if (!learned) { // the learned scorer reads where a span stands (asked_kind, before_of) and orders by it
            chosen = LinkScoring.roleOfNameLast(LinkScoring.askedKindLast(chosen, tokens), tokens);
        }
        Set<String> linked = new HashSet<>();
        for (Candidate c : chosen) {
            linked.add(c.id);
        }
        List<Link> links = new ArrayList<>(chosen.size());
        for (Candidate c : chosen) {
            List<Link> alternatives = new ArrayList<>();
            Set<String> named = new HashSet<>();
            for (Candidate o : ordered) { // best first
                // the same words only: a part of a name typed in full ("hanks" of "tom hanks") is no alternative
                if (alternatives.size() < MAX_ALTERNATIVES && o.start == c.start && o.end == c.end
                        && !linked.contains(o.id) && o.thresholdScore() >= LinkScoring.MIN_SCORE && named.add(o.id)) {
                    alternatives.add(link(o, tokens, List.of()));
                }
            }
            links.add(link(c, tokens, alternatives));
        }
        return links;
    }

    private static Link link(Candidate c, List<Token> tokens, List<Link> alternatives) {
        return new Link(c.node, c.id, c.name, round(Math.min(c.score, 1.0), REPORTED_DECIMALS), c.how,
                LinkText.stripPunct(LinkText.join(tokens, c.start, c.end)), List.copyOf(alternatives));
    }

    /** One word said exactly (or as its plural) that names an entity many facts touch: a genre, a language. */
    static boolean isSharedValue(Candidate c) {
        return ("exact".equals(c.how) || "singular".equals(c.how)) && c.end - c.start == 1
                && c.degree >= SHARED_VALUE_DEGREE;
    }

    /**
     * A name typed with its capitals in a question that uses case, matched closely ("Bullitt", "Diane Keaotn"); in
     * a question typed without capitals, which cannot show a name by its case, a name of two or more content
     * words matched as closely ("kate winslett" beside "leonardo dicaprio"): such a span is seldom a name by
     * accident.
     */
    static boolean isTypedName(Candidate c) {
        return (c.capitalised || c.spelledWithoutCase) && c.match >= LinkScoring.TYPED_NAME_MATCH;
    }

    /** An exact match of a number node ("1994", "7.5"): a year, a rating, a count. */
    static boolean isLiteral(Candidate c) {
        return "exact".equals(c.how) && LinkText.isDigits(c.name.replace(".", "").replace(",", ""));
    }

    /**
     * {@code x} rounded half-even to {@code decimals} on its exact binary value (0.0015 is stored a little
     * above, so it goes up; 2.675 a little below, so it goes down): never a double rounding through a decimal
     * string or {@code x * 1000}, which would move candidates across a tie.
     */
    static double round(double x, int decimals) {
        if (!Double.isFinite(x)) {
            return x;
        }
        return Double.parseDouble(new BigDecimal(x).setScale(decimals, RoundingMode.HALF_EVEN).toPlainString());
    }

    /**
     * Names in the order of their characters (code points). {@link String#compareTo} orders UTF-16 units
     * instead, which puts a letter above U+FFFF before U+E000..U+FFFF; this order is the one ties were always
     * broken in.
     */
    static final Comparator<String> BY_CODE_POINT = (a, b) -> {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i);
            int y = b.codePointAt(j);
            if (x != y) {
                return Integer.compare(x, y);
            }
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    };
}
