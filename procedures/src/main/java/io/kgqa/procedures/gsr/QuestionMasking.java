package io.kgqa.procedures.gsr;

import io.kgqa.procedures.linking.QuestionText;
import java.util.List;
import java.util.Locale;

/**
 * The question as the chain generator reads it: the topic entity's words replaced by {@link ChainModel#MASK}
 * ({@link QuestionText#maskTopic}), so that the model learns the question's shape, not its entities, then
 * everything but the mask lower-cased. Same rule as the Python trainer's {@code kgqa.models.gsr.masked}.
 */
public final class QuestionMasking {

    private QuestionMasking() {
    }

    public static String masked(String question, List<String> spans) {
        String text = QuestionText.maskTopic(question, spans, ChainModel.MASK);
        return text.toLowerCase(Locale.ROOT).replace(ChainModel.MASK.toLowerCase(Locale.ROOT), ChainModel.MASK);
    }
}
