package io.kgqa.procedures.linking;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The two readings of a question's {@code [brackets]}: the marked entity names, and the text without the marks. */
public final class QuestionText {

    private static final Pattern BRACKETS = Pattern.compile("\\[([^\\[\\]]+)]");
    private static final Pattern BRACKET_CHARS = Pattern.compile("[\\[\\]]");
    private static final Pattern SPACES = Pattern.compile("\\s+", Pattern.UNICODE_CHARACTER_CLASS);

    private QuestionText() {
    }

    /**
     * The text whose embedding is z_q: every '[' and ']' replaced by a space, runs of whitespace collapsed,
     * trimmed ("who directed [Kismet]" -> "who directed Kismet"). Must stay identical to
     * {@code kgqa.retrieve.subgraphrag.question_text}, which training uses, so both embed the same string.
     */
    public static String withoutBrackets(String question) {
        String spaced = BRACKET_CHARS.matcher(question).replaceAll(" ");
        return SPACES.matcher(spaced).replaceAll(" ").trim();
    }

    /**
     * The question with its topic entity replaced by {@code mask}: every {@code [bracketed]} name, else the
     * first of {@code spans} (the linked words) found in it, ignoring case; whitespace collapsed. What a model
     * that should learn the question's shape rather than its entity reads (GSR's chain generator, SubgraphRAG's
     * question embedding). Must stay identical to {@code kgqa.core.text.mask_topic}.
     */
    public static String maskTopic(String question, List<String> spans, String mask) {
        Matcher brackets = BRACKETS.matcher(question);
        boolean replaced = brackets.find();
        String text = replaced ? brackets.replaceAll(Matcher.quoteReplacement(mask)) : question;
        for (String span : spans == null ? List.<String>of() : spans) {
            if (replaced) {
                break;
            }
            if (span != null && !span.isEmpty()) {
                Matcher found = Pattern.compile(Pattern.quote(span), Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE)
                        .matcher(text);
                if (found.find()) {
                    text = found.replaceFirst(Matcher.quoteReplacement(mask));
                    replaced = true;
                }
            }
        }
        return String.join(" ", LinkText.split(text));
    }

    /**
     * The texts inside [brackets], stripped (no-break spaces too: {@link LinkText#isSpace}), blank ones
     * dropped, each once, in order of first appearance. Must stay identical to {@code kgqa.core.text.bracketed},
     * whose {@code str.strip} takes the same spaces off.
     */
    public static List<String> bracketed(String question) {
        LinkedHashSet<String> found = new LinkedHashSet<>();
        Matcher matcher = BRACKETS.matcher(question);
        while (matcher.find()) {
            String text = LinkText.strip(matcher.group(1));
            if (!text.isEmpty()) {
                found.add(text);
            }
        }
        return new ArrayList<>(found);
    }
}
