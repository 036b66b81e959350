package io.kgqa.procedures.text;

import io.kgqa.procedures.util.Json;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The fast encoder (all-MiniLM-L6-v2-static, distilled by model2vec): one row per token, a text's embedding
 * the mean of its tokens' rows, L2-normalised. It reproduces {@code model2vec.StaticModel.encode} and
 * Python's {@code kgqa.models.encoder.StaticEncoder} (tests/test_encoder_static.py compares all three):
 * <ol>
 *   <li>cut the text to {@code max_chars} code points (model2vec's max_length x median token length);</li>
 *   <li>the tokenizer's added tokens ({@code [PAD]}, {@code [UNK]}) are matched whole in the raw text;</li>
 *   <li>the rest is BERT's WordPiece ({@link WordPieceTokenizer}) over model2vec's own vocabulary, whose ids
 *       are not BERT's ({@code [unusedN]}, {@code [CLS]}, {@code [SEP]}, {@code [MASK]} are gone), with no
 *       special tokens added;</li>
 *   <li>truncate to {@code max_length} tokens, then drop {@code [UNK]};</li>
 *   <li>mean of the rows, divided by (norm + 1e-32): no known token gives the zero vector, as in model2vec.</li>
 * </ol>
 * The rows are read from model2vec's {@code model.safetensors} (one float32 tensor). Immutable, thread-safe.
 */
public final class StaticEmbedding {

    private final WordPieceTokenizer tokenizer;
    private final float[] table;
    private final int dimension;
    private final int rows;
    private final int maxLength;
    private final int maxChars;
    private final List<String> addedTokens;

    StaticEmbedding(WordPieceTokenizer tokenizer, float[] table, int dimension, int maxLength, int maxChars,
                    List<String> addedTokens) {
        this.tokenizer = tokenizer;
        this.table = table;
        this.dimension = dimension;
        this.rows = table.length / dimension;
        this.maxLength = maxLength;
        this.maxChars = maxChars;
        this.addedTokens = List.copyOf(addedTokens);
    }

    /** Reads {@code encoder.json}, {@code vocab.txt} and the safetensors table of {@code directory}. */
    static StaticEmbedding load(Path directory, Map<String, Object> meta) throws IOException {
        int dimension = intOf(meta, "dimension");
        int maxLength = intOf(meta, "max_length");
        int maxChars = intOf(meta, "max_chars");
        boolean lowercase = !(meta.get("do_lower_case") instanceof Boolean b) || b;
        boolean stripAccents = meta.get("strip_accents") instanceof Boolean b ? b : lowercase;
        String weights = meta.get("weights") instanceof String s ? s : "model.safetensors";
        String tensor = meta.get("tensor") instanceof String s ? s : "embeddings";
        List<String> added = new ArrayList<>();
        if (meta.get("added_tokens") instanceof List<?> list) {
            for (Object token : list) {
                added.add(String.valueOf(token));
            }
        }
        WordPieceTokenizer tokenizer = WordPieceTokenizer.fromVocabFile(directory.resolve("vocab.txt"),
                Math.max(maxLength, 2), lowercase, stripAccents);
        float[] table = readTensor(directory.resolve(weights), tensor, dimension);
        return new StaticEmbedding(tokenizer, table, dimension, maxLength, maxChars, added);
    }

    public int dimension() {
        return dimension;
    }

    /** The ids whose rows are averaged ({@code [UNK]} dropped), as Python's StaticEncoder.tokenize. */
    public int[] ids(String text) {
        List<String> pieces = new ArrayList<>();
        String cut = text;
        if (text.codePointCount(0, text.length()) > maxChars) {
            cut = text.substring(0, text.offsetByCodePoints(0, maxChars));
        }
        int from = 0;
        while (from <= cut.length()) {
            int at = -1;
            String match = null;
            for (String token : addedTokens) {
                int found = cut.indexOf(token, from);
                if (found >= 0 && (at < 0 || found < at || (found == at && token.length() > match.length()))) {
                    at = found;
                    match = token;
                }
            }
            pieces.addAll(tokenizer.tokenize(at < 0 ? cut.substring(from) : cut.substring(from, at)));
            if (at < 0) {
                break;
            }
            pieces.add(match);
            from = at + match.length();
        }
        int kept = Math.min(pieces.size(), maxLength);
        int unk = tokenizer.unkId();
        int[] ids = new int[kept];
        int n = 0;
        for (int i = 0; i < kept; i++) {
            int id = tokenizer.id(pieces.get(i));
            if (id != unk) {
                ids[n++] = id;
            }
        }
        return java.util.Arrays.copyOf(ids, n);
    }

    /** The L2-normalised mean of the text's token rows (sums in double). */
    public float[] embed(String text) {
        int[] ids = ids(text);
        double[] sum = new double[dimension];
        for (int id : ids) {
            if (id < 0 || id >= rows) {
                throw new IllegalStateException("token id " + id + " is outside the static table (" + rows + " rows)");
            }
            int base = id * dimension;
            for (int d = 0; d < dimension; d++) {
                sum[d] += table[base + d];
            }
        }
        double norm = 0;
        for (int d = 0; d < dimension; d++) {
            sum[d] = ids.length == 0 ? 0 : sum[d] / ids.length;
            norm += sum[d] * sum[d];
        }
        norm = Math.sqrt(norm) + 1e-32;
        float[] out = new float[dimension];
        for (int d = 0; d < dimension; d++) {
            out[d] = (float) (sum[d] / norm);
        }
        return out;
    }

    /**
     * One float32 tensor of a safetensors file: an 8-byte little-endian header length, a JSON header naming
     * each tensor's dtype, shape and byte range, then the data.
     */
    static float[] readTensor(Path file, String name, int dimension) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer length = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            readFully(channel, length, 0);
            long headerLength = length.flip().getLong();
            if (headerLength <= 0 || headerLength > 100_000_000L) {
                throw new IOException(file + " is not a safetensors file (header length " + headerLength + ")");
            }
            ByteBuffer header = ByteBuffer.allocate((int) headerLength);
            readFully(channel, header, 8);
            Object parsed = Json.parse(new String(header.array(), StandardCharsets.UTF_8));
            if (!(parsed instanceof Map<?, ?> tensors) || !(tensors.get(name) instanceof Map<?, ?> spec)) {
                throw new IOException(file + " has no tensor '" + name + "'");
            }
            if (!"F32".equals(spec.get("dtype"))) {
                throw new IOException(file + ": tensor '" + name + "' is " + spec.get("dtype") + ", expected F32");
            }
            List<?> shape = (List<?>) spec.get("shape");
            List<?> offsets = (List<?>) spec.get("data_offsets");
            long rows = ((Number) shape.get(0)).longValue();
            if (shape.size() != 2 || ((Number) shape.get(1)).intValue() != dimension) {
                throw new IOException(file + ": tensor '" + name + "' has shape " + shape + ", expected [n, " + dimension + "]");
            }
            long begin = ((Number) offsets.get(0)).longValue();
            long end = ((Number) offsets.get(1)).longValue();
            if (end - begin != rows * dimension * 4L || rows * dimension > Integer.MAX_VALUE) {
                throw new IOException(file + ": tensor '" + name + "' has " + (end - begin) + " bytes for shape " + shape);
            }
            ByteBuffer data = ByteBuffer.allocate((int) (end - begin)).order(ByteOrder.LITTLE_ENDIAN);
            readFully(channel, data, 8 + headerLength + begin);
            float[] table = new float[(int) (rows * dimension)];
            data.flip().asFloatBuffer().get(table);
            return table;
        }
    }

    private static void readFully(FileChannel channel, ByteBuffer buffer, long position) throws IOException {
        long at = position;
        while (buffer.hasRemaining()) {
            int read = channel.read(buffer, at);
            if (read < 0) {
                throw new IOException("unexpected end of file at byte " + at);
            }
            at += read;
        }
    }

    private static int intOf(Map<String, Object> meta, String key) {
        if (meta.get(key) instanceof Number n && n.intValue() > 0) {
            return n.intValue();
        }
        throw new IllegalArgumentException("encoder.json: " + key + " must be a positive integer, got " + meta.get(key));
    }
}
