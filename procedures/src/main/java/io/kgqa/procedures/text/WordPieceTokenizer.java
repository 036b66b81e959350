package io.kgqa.procedures.text;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * BERT's uncased WordPiece tokenizer, reimplemented to give exactly the ids of Hugging Face
 * {@code tokenizers} ({@code BertNormalizer} + {@code BertPreTokenizer} + {@code WordPiece} +
 * the {@code [CLS] … [SEP]} template), which sentence-transformers uses for all-MiniLM-L6-v2.
 *
 * <p>The steps, in the Rust library's order:
 * <ol>
 *   <li>clean: drop U+0000, U+FFFD and "other" characters (general category C*, except tab, CR and
 *       LF); map Unicode White_Space to a space;</li>
 *   <li>surround CJK ideographs with spaces, so each becomes a word;</li>
 *   <li>strip accents: NFD, then drop non-spacing marks (Mn);</li>
 *   <li>lowercase, one code point at a time (no context rules, so no final sigma);</li>
 *   <li>split on whitespace, and make every punctuation character (ASCII punctuation, or Unicode
 *       category P*) a word of its own;</li>
 *   <li>per word: greedy longest-match-first pieces, continuations prefixed {@code ##}; a word longer
 *       than 100 characters, or with an unmatchable rest, becomes {@code [UNK]};</li>
 *   <li>truncate to {@code maxLength - 2} pieces and add {@code [CLS]} and {@code [SEP]}.</li>
 * </ol>
 * A vocabulary without {@code [CLS]} and {@code [SEP]} (the static encoder's, whose texts have no special
 * tokens) serves {@link #tokenize} and {@link #id} only. Immutable and thread-safe.
 */
public final class WordPieceTokenizer {

    public static final String CLS = "[CLS]";
    public static final String SEP = "[SEP]";
    public static final String UNK = "[UNK]";
    public static final String CONTINUATION = "##";
    public static final int MAX_INPUT_CHARS_PER_WORD = 100;

    private final Map<String, Integer> vocabulary;
    private final int maxLength;
    private final boolean lowercase;
    private final boolean stripAccents;
    private final int clsId;
    private final int sepId;
    private final int unkId;

    /**
     * @param vocabulary token to id
     * @param maxLength the most ids {@link #encode} returns, specials included (256 for the encoder)
     */
    public WordPieceTokenizer(Map<String, Integer> vocabulary, int maxLength, boolean lowercase, boolean stripAccents) {
        if (maxLength < 2) {
            throw new IllegalArgumentException("maxLength must be at least 2 (room for [CLS] and [SEP]), got " + maxLength);
        }
        this.vocabulary = Collections.unmodifiableMap(new HashMap<>(vocabulary));
        this.maxLength = maxLength;
        this.lowercase = lowercase;
        this.stripAccents = stripAccents;
        this.clsId = vocabulary.getOrDefault(CLS, -1);
        this.sepId = vocabulary.getOrDefault(SEP, -1);
        this.unkId = requireToken(UNK);
    }

    /** Reads a {@code vocab.txt}: one token per line, the line number (0-based) is its id. */
    public static WordPieceTokenizer fromVocabFile(Path vocabFile, int maxLength, boolean lowercase, boolean stripAccents)
            throws IOException {
        Map<String, Integer> vocabulary = new HashMap<>(40_000);
        try (BufferedReader reader = Files.newBufferedReader(vocabFile, StandardCharsets.UTF_8)) {
            String line;
            int id = 0;
            while ((line = reader.readLine()) != null) {
                // Like the Rust reader: the line without its line break, otherwise verbatim.
                vocabulary.putIfAbsent(line, id);
                id++;
            }
        }
        return new WordPieceTokenizer(vocabulary, maxLength, lowercase, stripAccents);
    }

    private int requireToken(String token) {
        Integer id = vocabulary.get(token);
        if (id == null) {
            throw new IllegalArgumentException("the vocabulary has no " + token + " token");
        }
        return id;
    }

    public int maxLength() {
        return maxLength;
    }

    /** The id of a piece from {@link #tokenize}, {@code [UNK]}'s for a piece outside the vocabulary. */
    public int id(String piece) {
        Integer id = vocabulary.get(piece);
        return id != null ? id : unkId;
    }

    public int unkId() {
        return unkId;
    }

    private void requireSpecials() {
        if (clsId < 0 || sepId < 0) {
            throw new IllegalStateException("this vocabulary has no " + CLS + " and " + SEP + " tokens to encode with");
        }
    }

    /** The ids of {@code [CLS] pieces… [SEP]}, truncated to {@link #maxLength()}. */
    public long[] encode(String text) {
        requireSpecials();
        List<String> pieces = tokenize(text);
        int kept = Math.min(pieces.size(), maxLength - 2);
        long[] ids = new long[kept + 2];
        ids[0] = clsId;
        for (int i = 0; i < kept; i++) {
            Integer id = vocabulary.get(pieces.get(i));
            ids[i + 1] = id != null ? id : unkId;
        }
        ids[kept + 1] = sepId;
        return ids;
    }

    /**
     * Like {@link #encode(String)}, but every occurrence of the vocabulary token {@code special} (e.g.
     * {@code [MASK]}) stays one id, as Hugging Face tokenizers keep their special tokens whole.
     */
    public long[] encode(String text, String special) {
        requireSpecials();
        int specialId = requireToken(special);
        List<String> pieces = new ArrayList<>();
        int from = 0;
        while (true) {
            int at = text.indexOf(special, from);
            pieces.addAll(tokenize(at < 0 ? text.substring(from) : text.substring(from, at)));
            if (at < 0) {
                break;
            }
            pieces.add(special);
            from = at + special.length();
        }
        int kept = Math.min(pieces.size(), maxLength - 2);
        long[] ids = new long[kept + 2];
        ids[0] = clsId;
        for (int i = 0; i < kept; i++) {
            Integer id = pieces.get(i).equals(special) ? Integer.valueOf(specialId) : vocabulary.get(pieces.get(i));
            ids[i + 1] = id != null ? id : unkId;
        }
        ids[kept + 1] = sepId;
        return ids;
    }

    /** The word pieces of {@code text}, without specials and without truncation. */
    public List<String> tokenize(String text) {
        List<String> pieces = new ArrayList<>();
        for (String word : preTokenize(normalize(text))) {
            wordPiece(word, pieces);
        }
        return pieces;
    }

    /** Steps 1–4: clean, CJK spacing, accents, lowercase. */
    String normalize(String text) {
        StringBuilder cleaned = new StringBuilder(text.length() + 8);
        text.codePoints().forEach(cp -> {
            if (cp == 0 || cp == 0xFFFD || isControl(cp)) {
                return;
            }
            if (isWhitespace(cp)) {
                cleaned.append(' ');
            } else if (isChineseChar(cp)) {
                cleaned.append(' ').appendCodePoint(cp).append(' ');
            } else {
                cleaned.appendCodePoint(cp);
            }
        });
        String result = cleaned.toString();
        if (stripAccents) {
            String decomposed = Normalizer.normalize(result, Normalizer.Form.NFD);
            StringBuilder stripped = new StringBuilder(decomposed.length());
            decomposed.codePoints()
                    .filter(cp -> Character.getType(cp) != Character.NON_SPACING_MARK)
                    .forEach(stripped::appendCodePoint);
            result = stripped.toString();
        }
        if (lowercase) {
            StringBuilder lower = new StringBuilder(result.length());
            result.codePoints().forEach(cp -> {
                if (cp == 0x0130) {
                    // Rust's char::to_lowercase: 'İ' -> "i\u0307" (Java's per-code-point mapping drops the dot).
                    lower.append('i').append('\u0307');
                } else {
                    lower.appendCodePoint(Character.toLowerCase(cp));
                }
            });
            result = lower.toString();
        }
        return result;
    }

    /** Step 5: whitespace split with punctuation isolated. */
    static List<String> preTokenize(String text) {
        List<String> words = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        int i = 0;
        while (i < text.length()) {
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            if (isWhitespace(cp)) {
                flush(current, words);
            } else if (isPunctuation(cp)) {
                flush(current, words);
                words.add(new String(Character.toChars(cp)));
            } else {
                current.appendCodePoint(cp);
            }
        }
        flush(current, words);
        return words;
    }

    private static void flush(StringBuilder current, List<String> words) {
        if (current.length() > 0) {
            words.add(current.toString());
            current.setLength(0);
        }
    }

    /** Step 6: greedy longest-match-first; the whole word is [UNK] if any rest cannot be matched. */
    private void wordPiece(String word, List<String> out) {
        int length = word.codePointCount(0, word.length());
        if (length > MAX_INPUT_CHARS_PER_WORD) {
            out.add(UNK);
            return;
        }
        List<String> pieces = new ArrayList<>();
        int start = 0;
        while (start < word.length()) {
            int end = word.length();
            String match = null;
            while (start < end) {
                String candidate = word.substring(start, end);
                if (start > 0) {
                    candidate = CONTINUATION + candidate;
                }
                if (vocabulary.containsKey(candidate)) {
                    match = candidate;
                    break;
                }
                end = word.offsetByCodePoints(end, -1);
            }
            if (match == null) {
                out.add(UNK);
                return;
            }
            pieces.add(match);
            start = end;
        }
        out.addAll(pieces);
    }

    /** Rust's {@code char::is_whitespace} (the Unicode White_Space property), as BertNormalizer uses it. */
    static boolean isWhitespace(int cp) {
        switch (cp) {
            case 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
                return true;
            default:
                return cp >= 0x2000 && cp <= 0x200A;
        }
    }

    /** BertNormalizer's is_control: Unicode "other" (C*), except tab, LF and CR which count as whitespace. */
    static boolean isControl(int cp) {
        if (cp == '\t' || cp == '\n' || cp == '\r') {
            return false;
        }
        int type = Character.getType(cp);
        return type == Character.CONTROL || type == Character.FORMAT || type == Character.SURROGATE
                || type == Character.PRIVATE_USE || type == Character.UNASSIGNED;
    }

    /** ASCII punctuation (which includes symbols such as $ + < = > ^ ` | ~) or Unicode category P*. */
    static boolean isPunctuation(int cp) {
        if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) {
            return true;
        }
        int type = Character.getType(cp);
        return type == Character.CONNECTOR_PUNCTUATION || type == Character.DASH_PUNCTUATION
                || type == Character.START_PUNCTUATION || type == Character.END_PUNCTUATION
                || type == Character.INITIAL_QUOTE_PUNCTUATION || type == Character.FINAL_QUOTE_PUNCTUATION
                || type == Character.OTHER_PUNCTUATION;
    }

    /** The CJK blocks BERT treats as one-character words. */
    static boolean isChineseChar(int cp) {
        return (cp >= 0x4E00 && cp <= 0x9FFF)
                || (cp >= 0x3400 && cp <= 0x4DBF)
                || (cp >= 0x20000 && cp <= 0x2A6DF)
                || (cp >= 0x2A700 && cp <= 0x2B73F)
                || (cp >= 0x2B740 && cp <= 0x2B81F)
                || (cp >= 0x2B820 && cp <= 0x2CEAF)
                || (cp >= 0xF900 && cp <= 0xFAFF)
                || (cp >= 0x2F800 && cp <= 0x2FA1F);
    }
}
