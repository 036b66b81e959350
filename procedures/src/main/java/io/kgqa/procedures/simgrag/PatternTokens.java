package io.kgqa.procedures.simgrag;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A question as {@link OfflinePatternBuilder} reads it: lower-cased words, each linked entity's words replaced by
 * one token that stands for the entity, so that the rules about words next to an entity see it as one word.
 */
final class PatternTokens {

    private static final Pattern TOKEN = Pattern.compile("[\\p{L}\\p{N}']+(?:-[\\p{L}\\p{N}']+)*");

    /** A word of the question, or (entity &gt;= 0) the entity of that index. */
    record Token(String text, int entity) {
        boolean word() {
            return entity < 0 && !text.equals("co-");
        }
    }

    private PatternTokens() {
    }

    /** The question's words, each entity's span replaced by one token that stands for it. */
    static List<Token> of(String question, List<OfflinePatternBuilder.Entity> entities) {
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

    /** Where entity {@code entity} stands; after the last word when its span is not in the question. */
    static int position(List<Token> tokens, int entity) {
        for (int i = 0; i < tokens.size(); i++) {
            if (tokens.get(i).entity() == entity) {
                return i;
            }
        }
        return tokens.size();
    }

    /** The question without its entities, for ranking relations when no word names one. */
    static String masked(List<Token> tokens) {
        StringBuilder out = new StringBuilder();
        for (Token t : tokens) {
            if (t.entity() < 0) {
                out.append(out.length() > 0 ? " " : "").append(t.text().equals("co-") ? "co" : t.text());
            }
        }
        return out.length() > 0 ? out.toString() : "related to";
    }
}
