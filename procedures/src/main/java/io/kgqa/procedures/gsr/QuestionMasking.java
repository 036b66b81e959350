package io.kgqa.procedures.gsr;

import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The question as the chain generator reads it: the topic entity's words replaced by {@link ChainModel#MASK},
 * so that the model learns the question's shape, not its entities. Same rule as the Python trainer's
 * {@code kgqa.models.gsr.masked}: every {@code [bracketed]} name, else the first linked span (ignoring case),
 * then whitespace collapsed and everything but the mask lower-cased.
 */
public final class QuestionMasking {

    private static final Pattern BRACKET = Pattern.compile("\\[[^\\]]+\\]");
    private static final Pattern WHITESPACE = Pattern.compile("\\s+");

    private QuestionMasking() {
    }

    public static String masked(String question, List<String> spans) {
        String text = BRACKET.matcher(question).replaceAll(Matcher.quoteReplacement(ChainModel.MASK));
        for (String span : spans) {
            if (span != null && !span.isEmpty() && !text.contains(ChainModel.MASK)) {
                text = Pattern.compile(Pattern.quote(span), Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE)
                        .matcher(text).replaceFirst(Matcher.quoteReplacement(ChainModel.MASK));
            }
        }
        String collapsed = WHITESPACE.matcher(text.strip()).replaceAll(" ");
        return collapsed.toLowerCase(Locale.ROOT).replace(ChainModel.MASK.toLowerCase(Locale.ROOT), ChainModel.MASK);
    }
}
