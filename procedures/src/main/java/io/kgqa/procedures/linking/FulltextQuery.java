package io.kgqa.procedures.linking;

import io.kgqa.procedures.linking.LinkText.Token;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/** The one Lucene query a question makes of the {@code entity_name} full-text index, every word escaped. */
final class FulltextQuery {

    /**
     * Terms of the one full-text query, the first words of the question first: Lucene refuses a query of more
     * than 1,024 clauses (a fuzzy term expands to several), and a name is found by its own words anyway.
     */
    static final int MAX_QUERY_TERMS = 64;
    /** Question words still count a little: long names made mostly of them ("We're No Angels") must rank. */
    private static final String QUESTION_WORD_BOOST = "^0.2";
    private static final Pattern LUCENE_SPECIAL = Pattern.compile("[+\\-!(){}\\[\\]^\"~*?:\\\\/&|]");

    private FulltextQuery() {
    }

    /**
     * One OR query over the words of the question ("" when it has no content word). Content words count
     * fully and longer ones become fuzzy terms ({@code word~1}, {@code ~2} from 8 letters: a typed word may
     * have lost a letter); question words count a little ({@code the^0.2}). Each word goes both normalised
     * and as typed (lower-case, accents and inner apostrophes kept, as the analyzer indexes "O'Hara" and
     * "Chéri"), always escaped.
     */
    static String of(List<Token> tokens, boolean[] content) {
        return of(tokens, content, word -> false);
    }

    /**
     * As {@link #of(List, boolean[])}; a common English word ({@code english}: "international") is not also
     * looked for as two words, which would only make the query longer.
     */
    static String of(List<Token> tokens, boolean[] content, Predicate<String> english) {
        boolean any = false;
        for (boolean c : content) {
            any |= c;
        }
        if (!any) {
            return "";
        }
        Set<String> terms = new LinkedHashSet<>();
        for (int k = 0; k < tokens.size() && terms.size() < MAX_QUERY_TERMS; k++) {
            Token t = tokens.get(k);
            String typed = LinkText.stripPunct(t.text()).toLowerCase(Locale.ROOT);
            Set<String> forms = new LinkedHashSet<>(LinkText.split(t.norm()));
            if (!typed.isEmpty() && !typed.equals(t.norm())) {
                forms.add(typed);
            }
            for (String w : forms) {
                if (!content[k]) {
                    terms.add(escape(w) + QUESTION_WORD_BOOST);
                    continue;
                }
                int length = LinkText.length(w);
                int edits = length < 4 ? 0 : length < 8 ? 1 : 2;
                terms.add(edits > 0 ? escape(w) + "~" + edits : escape(w));
            }
            if (content[k]) { // "comedies" is more than one typo away from "Comedy"; its singular is spelt
                for (String singular : NameSimilarity.singulars(t.norm())) {
                    terms.add(escape(singular));
                }
                for (String phrase : english.test(t.norm()) ? List.<String>of() : LinkText.splits(t.norm())) {
                    if (terms.size() < MAX_QUERY_TERMS) {
                        terms.add("\"" + phrase + "\"");
                    }
                }
            }
        }
        return String.join(" ", terms);
    }

    /** {@code text} with Lucene query-parser special characters escaped and the operators AND/OR/NOT lower-cased. */
    static String escape(String text) {
        String escaped = LUCENE_SPECIAL.matcher(text).replaceAll("\\\\$0");
        StringBuilder out = new StringBuilder(escaped.length());
        int i = 0;
        while (i < escaped.length()) {
            int operator = operatorAt(escaped, i);
            if (operator > 0) {
                out.append(escaped.substring(i, i + operator).toLowerCase(Locale.ROOT));
                i += operator;
            } else {
                out.append(escaped.charAt(i));
                i++;
            }
        }
        return out.toString();
    }

    /**
     * The length of AND/OR/NOT standing as a whole word at {@code i}, else 0; letters, numbers and '_' make a
     * word, so "ANDROID" and "_AND_" keep their case.
     */
    private static int operatorAt(String text, int i) {
        if (i > 0 && isWordChar(text.codePointBefore(i))) {
            return 0;
        }
        for (String operator : new String[] {"AND", "OR", "NOT"}) {
            int end = i + operator.length();
            if (text.startsWith(operator, i) && (end == text.length() || !isWordChar(text.codePointAt(end)))) {
                return operator.length();
            }
        }
        return 0;
    }

    private static boolean isWordChar(int cp) {
        return cp == '_' || LinkText.isLetterOrNumber(cp);
    }
}
