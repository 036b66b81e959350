package io.kgqa.procedures.util;

import java.util.List;
import java.util.Map;

/**
 * The one place that bounds the text a caller hands a {@code kgqa.*} procedure: a question (or claim, or pattern
 * node) of at most {@link #MAX_TEXT_CHARS} characters, none of its words longer than {@link #MAX_WORD_CHARS}.
 *
 * <p>Why: the linker's n-grams and fuzzy full-text queries, the masking and the tokenisers all grow with the
 * text and with its longest word; one 1,000,000-letter word exhausted the database's heap within seconds
 * (issue 30). The HTTP API stops at 2,000 characters, but a Bolt client or {@code kgqa cypher} reaches the
 * procedures directly, so they check for themselves, before any work, in one line that names the limit.
 */
public final class TextLimits {

    /** Characters of one question, claim or pattern text: a few paragraphs, far beyond any question. */
    public static final int MAX_TEXT_CHARS = 4_000;

    /** Characters of one whitespace-separated word: longer than any name's word, and than a URL in a question. */
    public static final int MAX_WORD_CHARS = 200;

    private TextLimits() {
    }

    /**
     * {@code text} as given when it is within both limits (null passes: each procedure says what null means
     * for it); else a {@link BadArgumentException} naming {@code argument} and the limit it broke.
     */
    public static String question(String text, String argument) {
        length(text, argument);
        if (text == null) {
            return null;
        }
        int word = 0;
        for (int i = 0; i < text.length(); i++) {
            word = Character.isWhitespace(text.charAt(i)) ? 0 : word + 1;
            if (word > MAX_WORD_CHARS) {
                throw new BadArgumentException(argument + " has a word longer than " + MAX_WORD_CHARS
                        + " characters (at character " + (i - MAX_WORD_CHARS + 1) + "); kgqa procedures take words of"
                        + " at most " + MAX_WORD_CHARS + " characters");
            }
        }
        return text;
    }

    /** {@code text} within {@link #MAX_TEXT_CHARS} characters (names and ids: no word limit). */
    public static String length(String text, String argument) {
        if (text != null && text.length() > MAX_TEXT_CHARS) {
            throw new BadArgumentException(argument + " is " + text.length() + " characters long; kgqa procedures"
                    + " take at most " + MAX_TEXT_CHARS + " characters");
        }
        return text;
    }

    /** Every string inside {@code value} (lists and maps, as a pattern of edges is given) checked as text. */
    public static void within(Object value, String argument) {
        within(value, argument, 0);
    }

    private static void within(Object value, String argument, int depth) {
        if (value instanceof String s) {
            question(s, argument);
        } else if (depth < 8 && value instanceof List<?> list) {
            for (int i = 0; i < list.size(); i++) {
                within(list.get(i), argument + "[" + i + "]", depth + 1);
            }
        } else if (depth < 8 && value instanceof Map<?, ?> map) {
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                within(entry.getValue(), argument + "." + entry.getKey(), depth + 1);
            }
        }
    }
}
