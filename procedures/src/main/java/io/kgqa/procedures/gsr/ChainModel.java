package io.kgqa.procedures.gsr;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import io.kgqa.procedures.onnx.ModelCache;
import io.kgqa.procedures.onnx.ModelsDir;
import io.kgqa.procedures.onnx.Onnx;
import io.kgqa.procedures.text.WordPieceTokenizer;
import io.kgqa.procedures.util.BadArgumentException;
import io.kgqa.procedures.util.Json;
import java.nio.LongBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A trained GSR chain generator: {@code gsr/<name>/{encoder.onnx, decoder.onnx, vocab.txt, meta.json}}, as
 * {@code kgqa train gsr} writes it (the .onnx files may keep their weights in {@code .onnx.data} files beside
 * them, which ONNX Runtime reads itself).
 *
 * <p>{@code encoder.onnx}: {@code ids, mask} (int64 {@code [B, W]}) to {@code memory} (float32 {@code [B, W, D]}).
 * {@code decoder.onnx}: {@code memory, mask, prefix} (int64 {@code [B, L]}) to {@code logprobs} (float32
 * {@code [B, V]}), the next token's log-probabilities. {@code meta.json}: {@code chain_tokens} (the decoder's
 * vocabulary: {@code <pad>, <bos>, <eos>}, then {@code relation>} for a step along the KG's direction and
 * {@code relation<} against it), {@code max_chain} and {@code max_words}.
 */
public final class ChainModel implements AutoCloseable {

    public static final String KIND = "gsr";
    /** The encoder's token for the topic entity. */
    public static final String MASK = "[MASK]";
    static final List<String> FILES = List.of("encoder.onnx", "decoder.onnx", "vocab.txt", "meta.json");

    /** The deliberate process-wide cache of loaded generators (see {@link ModelCache}). */
    private static final ModelCache<ChainModel> CACHE = new ModelCache<>();

    public final String name;
    private final OrtSession encoder;
    private final OrtSession decoder;
    private final WordPieceTokenizer tokenizer;
    private final List<Chain.Step> steps; // by token id; null for the three specials
    private final int maxChain;

    private ChainModel(String name, OrtSession encoder, OrtSession decoder, WordPieceTokenizer tokenizer,
            List<Chain.Step> steps, int maxChain) {
        this.name = name;
        this.encoder = encoder;
        this.decoder = decoder;
        this.tokenizer = tokenizer;
        this.steps = steps;
        this.maxChain = maxChain;
    }

    /**
     * The cached generator {@code name}; close the lease when done.
     *
     * @throws IllegalArgumentException "no GSR model 'x' in <dir> …; train one with `kgqa train gsr`"
     */
    public static ModelCache.Lease<ChainModel> acquire(ModelsDir.Ref ref) {
        Path directory = ref.directory();
        String name = directory.getFileName().toString();
        List<Path> files = new ArrayList<>();
        for (String file : FILES) {
            Path path = directory.resolve(file);
            if (!Files.isRegularFile(path)) {
                throw ref.missing(file);
            }
            files.add(path);
        }
        for (String data : List.of("encoder.onnx.data", "decoder.onnx.data")) {
            if (Files.isRegularFile(directory.resolve(data))) {
                files.add(directory.resolve(data));
            }
        }
        return CACHE.acquire(ref.label(), directory, files, dir -> load(name, dir));
    }

    static ChainModel load(String name, Path directory) throws Exception {
        Map<String, Object> meta = Json.readObject(directory.resolve("meta.json"));
        if (!(meta.get("chain_tokens") instanceof List<?> tokens) || tokens.size() < 4) {
            throw new BadArgumentException(directory.resolve("meta.json") + ": chain_tokens must list <pad>, <bos>,"
                    + " <eos> and at least one relation token");
        }
        List<Chain.Step> steps = new ArrayList<>(tokens.size());
        for (int i = 0; i < tokens.size(); i++) {
            String token = String.valueOf(tokens.get(i));
            if (i <= BeamSearch.EOS) {
                steps.add(null);
            } else if (token.length() > 1 && (token.endsWith(">") || token.endsWith("<"))) {
                steps.add(new Chain.Step(token.substring(0, token.length() - 1), token.endsWith(">")));
            } else {
                throw new BadArgumentException(directory.resolve("meta.json") + ": chain_tokens[" + i + "] '" + token
                        + "' is not a relation followed by > or <");
            }
        }
        int maxChain = meta.get("max_chain") instanceof Number n ? n.intValue() : 4;
        int maxWords = meta.get("max_words") instanceof Number n ? n.intValue() : 40;
        WordPieceTokenizer tokenizer = WordPieceTokenizer.fromVocabFile(directory.resolve("vocab.txt"), maxWords, true, true);
        OrtSession encoder = Onnx.openSession(directory.resolve("encoder.onnx"));
        try {
            OrtSession decoder = Onnx.openSession(directory.resolve("decoder.onnx"));
            return new ChainModel(name, encoder, decoder, tokenizer, steps, maxChain);
        } catch (OrtException | RuntimeException e) {
            encoder.close();
            throw e;
        }
    }

    public int maxChain() {
        return maxChain;
    }

    /** The {@code beams} most likely chains for a question whose topic entity is {@link #MASK}, best first. */
    public List<Chain> chains(String maskedQuestion, int beams) {
        try {
            return generate(maskedQuestion, beams);
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("GSR model '" + name + "' failed on ONNX Runtime: " + e.getMessage(), e);
        }
    }

    private List<Chain> generate(String maskedQuestion, int beams) throws Exception {
        OrtEnvironment env = Onnx.environment();
        long[] ids = tokenizer.encode(maskedQuestion, MASK);
        int words = ids.length;
        long[] ones = new long[words];
        java.util.Arrays.fill(ones, 1L);
        float[][] memory;
        try (OnnxTensor idsTensor = OnnxTensor.createTensor(env, LongBuffer.wrap(ids), new long[] {1, words});
                OnnxTensor maskTensor = OnnxTensor.createTensor(env, LongBuffer.wrap(ones), new long[] {1, words});
                OrtSession.Result result = encoder.run(Map.of("ids", idsTensor, "mask", maskTensor))) {
            memory = ((float[][][]) result.get(0).getValue())[0];
        }
        int width = memory[0].length;
        float[] flatMemory = new float[words * width];
        for (int w = 0; w < words; w++) {
            System.arraycopy(memory[w], 0, flatMemory, w * width, width);
        }
        BeamSearch.NextToken next = prefixes -> {
            int n = prefixes.size();
            int length = prefixes.get(0).length;
            float[] batchMemory = new float[n * flatMemory.length];
            long[] batchMask = new long[n * words];
            long[] batchPrefix = new long[n * length];
            for (int b = 0; b < n; b++) {
                System.arraycopy(flatMemory, 0, batchMemory, b * flatMemory.length, flatMemory.length);
                System.arraycopy(ones, 0, batchMask, b * words, words);
                int[] prefix = prefixes.get(b);
                for (int t = 0; t < length; t++) {
                    batchPrefix[b * length + t] = prefix[t];
                }
            }
            try (OnnxTensor m = OnnxTensor.createTensor(env, java.nio.FloatBuffer.wrap(batchMemory),
                            new long[] {n, words, width});
                    OnnxTensor k = OnnxTensor.createTensor(env, LongBuffer.wrap(batchMask), new long[] {n, words});
                    OnnxTensor p = OnnxTensor.createTensor(env, LongBuffer.wrap(batchPrefix), new long[] {n, length});
                    OrtSession.Result result = decoder.run(Map.of("memory", m, "mask", k, "prefix", p))) {
                return (float[][]) result.get(0).getValue();
            }
        };
        List<Chain> chains = new ArrayList<>();
        for (BeamSearch.Sequence sequence : BeamSearch.search(next, beams, maxChain)) {
            List<Chain.Step> chain = new ArrayList<>();
            for (int token : sequence.body()) {
                if (token >= steps.size() || steps.get(token) == null) {
                    throw new IllegalStateException("GSR model '" + name + "' produced token " + token
                            + ", which is not a relation of its chain_tokens");
                }
                chain.add(steps.get(token));
            }
            chains.add(new Chain(List.copyOf(chain), sequence.score()));
        }
        return chains;
    }

    @Override
    public void close() throws OrtException {
        try {
            encoder.close();
        } finally {
            decoder.close();
        }
    }
}
