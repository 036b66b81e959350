package io.kgqa.procedures.linking;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * How a name may be typed other than as it is stored: with typos (a bounded edit distance), in other case,
 * as a plural, or with a possessive. Pure string rules, no graph.
 */
final class NameSimilarity {

    private NameSimilarity() {
    }

    /** Typos tolerated in a name of {@code length} characters: none up to 4, one up to 8, then one per 8 more. */
    static int allowedEdits(int length) {
        if (length <= 4) {
            return 0;
        }
        if (length <= 8) {
            return 1;
        }
        return 1 + (length - 1) / 8;
    }

    /**
     * Edit distance of {@code a} and {@code b} in which swapping two neighbouring letters is one edit ("Riener",
     * "Reiner": the commonest slip when typing a name), or {@code bound + 1} as soon as it is known to exceed
     * {@code bound}. This is the optimal string alignment distance: no substring is edited twice.
     */
    static int editDistance(String a, String b, int bound) {
        return editDistance(a.codePoints().toArray(), b.codePoints().toArray(), bound);
    }

    static int editDistance(int[] a, int[] b, int bound) {
        if (Math.abs(a.length - b.length) > bound) {
            return bound + 1;
        }
        if (Arrays.equals(a, b)) {
            return 0;
        }
        int big = bound + 1;
        int[] beforePrevious = null;
        int[] previous = new int[b.length + 1];
        for (int j = 0; j <= b.length; j++) {
            previous[j] = j <= bound ? j : big;
        }
        for (int i = 1; i <= a.length; i++) {
            int ca = a[i - 1];
            int lo = Math.max(1, i - bound);
            int hi = Math.min(b.length, i + bound);
            int[] current = new int[b.length + 1];
            Arrays.fill(current, big);
            current[0] = i <= bound ? i : big;
            int rowMin = current[0];
            for (int j = lo; j <= hi; j++) {
                int value = previous[j - 1] + (ca != b[j - 1] ? 1 : 0);
                if (previous[j] + 1 < value) {
                    value = previous[j] + 1;
                }
                if (current[j - 1] + 1 < value) {
                    value = current[j - 1] + 1;
                }
                if (beforePrevious != null && j > 1 && ca == b[j - 2] && a[i - 2] == b[j - 1]
                        && beforePrevious[j - 2] + 1 < value) {
                    value = beforePrevious[j - 2] + 1;
                }
                current[j] = value;
                if (value < rowMin) {
                    rowMin = value;
                }
            }
            if (rowMin > bound) {
                return big;
            }
            beforePrevious = previous;
            previous = current;
        }
        return Math.min(previous[b.length], big);
    }

    /**
     * How many characters one of the two uses and the other does not: each edit changes at most two, so a
     * count above twice the bound rules a window out before the costlier {@link #editDistance}.
     */
    static int alphabetDifference(Set<Integer> letters, int[] window) {
        Set<Integer> other = new HashSet<>();
        for (int cp : window) {
            other.add(cp);
        }
        int count = 0;
        for (int cp : other) {
            if (!letters.contains(cp)) {
                count++;
            }
        }
        for (int cp : letters) {
            if (!other.contains(cp)) {
                count++;
            }
        }
        return count;
    }

    /**
     * As typed, lower case, Every Word Capitalised, Title Case with minor words lower, First capital; each once,
     * in that order (the order the exact lookups, and so the tie order, follow).
     */
    static List<String> caseVariants(String text) {
        String[] words = text.split(" ", -1);
        StringBuilder capitalised = new StringBuilder();
        StringBuilder title = new StringBuilder();
        for (int k = 0; k < words.length; k++) {
            String w = words[k];
            if (k > 0) {
                capitalised.append(' ');
                title.append(' ');
            }
            capitalised.append(LinkText.capitalizeFirst(w));
            title.append(k > 0 && LinkText.MINOR.contains(lower(w)) ? w : LinkText.capitalizeFirst(w));
        }
        LinkedHashSet<String> variants = new LinkedHashSet<>(List.of(text, lower(text),
                capitalised.toString(), title.toString(), LinkText.capitalizeFirst(text)));
        return new ArrayList<>(variants);
    }

    /** {@code text} without a final possessive ("World's" -> "World"), or null when it has none. */
    static String withoutPossessive(String text) {
        for (String suffix : new String[] {"'s", "\u2019s", "'S", "\u2019S"}) {
            if (text.endsWith(suffix) && text.length() > suffix.length() + 1) {
                return text.substring(0, text.length() - suffix.length());
            }
        }
        return null;
    }

    /**
     * Singular forms of a span whose last word is an English plural of four letters or more: "westerns" ->
     * "western", "comedies" -> "comedy", "boxes" -> "box"/"boxe". Words in -ss, -us, -is and possessives are no plurals.
     */
    static List<String> singulars(String text) {
        int space = text.lastIndexOf(' ');
        String last = text.substring(space + 1);
        String lower = lower(last);
        if (LinkText.length(lower) < 4 || !lower.endsWith("s") || lower.endsWith("ss") || lower.endsWith("us")
                || lower.endsWith("is") || lower.endsWith("'s") || lower.endsWith("\u2019s")
                || !Character.isLetter(lower.charAt(lower.length() - 2))) {
            return List.of();
        }
        String head = text.substring(0, space + 1);
        List<String> out = new ArrayList<>();
        if (lower.endsWith("ies")) {
            out.add(head + last.substring(0, last.length() - 3) + "y");
        }
        if (lower.endsWith("es")) {
            out.add(head + last.substring(0, last.length() - 2));
        }
        out.add(head + last.substring(0, last.length() - 1));
        return out;
    }

    private static String lower(String text) {
        return text.toLowerCase(Locale.ROOT);
    }
}
