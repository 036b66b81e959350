package io.kgqa.procedures.onnx;

import io.kgqa.procedures.util.BadArgumentException;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * Where the trained and exported models live on the server's file system.
 *
 * <p>Layout: {@code encoder/<encoderName>/{model.onnx, vocab.txt, encoder.json}} and
 * {@code subgraphrag/<modelName>/{model.onnx, meta.json}}.
 *
 * <p>Resolution order: the JVM system property {@value #PROPERTY} (the managed server sets it to
 * {@code <KGQA_HOME>/models}), then the environment variable {@code KGQA_MODELS_DIR}, then
 * {@code $KGQA_HOME/models}, then {@code ~/.kgqa/models}. Read on every call, not cached, so a test
 * or an operator can repoint it without a restart.
 */
public final class ModelsDir {

    public static final String PROPERTY = "kgqa.models.dir";

    /** Model names become directory names: no separators, no "..", nothing a shell would mangle. */
    private static final Pattern SAFE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

    private ModelsDir() {
    }

    public static Path root() {
        String property = System.getProperty(PROPERTY);
        if (property != null && !property.isBlank()) {
            return Path.of(property.trim());
        }
        String env = System.getenv("KGQA_MODELS_DIR");
        if (env != null && !env.isBlank()) {
            return Path.of(env.trim());
        }
        String home = System.getenv("KGQA_HOME");
        if (home != null && !home.isBlank()) {
            return Path.of(home.trim(), "models");
        }
        return Path.of(System.getProperty("user.home"), ".kgqa", "models");
    }

    /**
     * The directory of one model of a kind ({@code encoder} or {@code subgraphrag}).
     *
     * @param argumentName named in the error for an unsafe name, e.g. {@code config.model}
     */
    public static Path modelDir(String kind, String name, String argumentName) {
        if (name == null || !SAFE_NAME.matcher(name).matches() || name.contains("..")) {
            throw new BadArgumentException(argumentName + " must be a model name of letters, digits, '.', '_'"
                    + " or '-' (at most 128 characters), got " + (name == null ? "null" : "'" + name + "'"));
        }
        return root().resolve(kind).resolve(name);
    }
}
