package io.kgqa.procedures.linking;

import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * How the linker reads text: the question cut into tokens, names and tokens folded into one comparable form,
 * and which tokens are content (could be part of a name) rather than the words questions ask with.
 *
 * <p>Everything here counts in code points, not UTF-16 units: an astral letter (an emoji in a title, a rare
 * CJK character) is one character for lengths, edits and capitals, as a reader counts it.
 */
final class LinkText {

    private LinkText() {
    }

    /** A whitespace-separated token of the question: as typed, and normalised ("" for pure punctuation). */
    record Token(String text, String norm) {
    }

    /**
     * Function words and the generic vocabulary of questions in English: a span made only of these is rarely
     * the entity meant. What a KG's own questions ask with ("films", "born", "capital") is learned per KG
     * ({@link LinkingWords}), and the words of the KG's relation names are added too. The verbs users ask with
     * ("who made X", "I want ...") are here: an entity named "Made" is meant only when typed as a name.
     */
    static final Set<String> STOPWORDS = Set.copyOf(Arrays.asList("""
            a about above after again against all also am an and any are as at be because been before being below
            between both but by can could did do does doing done down during each few for from further had has have
            having he her here hers herself him himself his how i if in into is it its itself just me more most my
            myself no nor not of off on once only or other our ours out over own same she should so some such than
            that the their theirs them themselves then there these they this those through to too under until up
            very was we were what when where which while who whom whose why will with would you your yours
            s t d ll m re ve
            person people someone somebody thing things kind kinds type types sort sorts name names named called
            year years date dates share shared sharing together
            tell give list find know say said show shown many much often make makes made making want wants
            was were be been being is are
            """.trim().split("\\s+")));

    /** Words a title leaves in lower case ("What's in a Name?", "Lord of the Rings"). */
    static final Set<String> MINOR = Set.of(
            "a", "an", "the", "of", "in", "on", "at", "to", "for", "and", "or", "nor", "but", "by", "with", "from",
            "as", "into");

    /** Quotes, brackets and sentence punctuation around a name as typed ("\"The Fall\"?"). */
    static final String OUTER_PUNCT = "\"'\u201c\u201d\u2018\u2019`([{<)]}>,.;:!?";

    private static final Pattern RELATION_SEPARATOR = Pattern.compile("[._/]");

    /**
     * Letters that no Unicode decomposition takes apart but that a user types as plain Latin ("Jud Suss" for
     * "Jud Süß", "Bjorn" for "Bjørn").
     */
    private static final Map<Integer, String> FOLDED = Map.ofEntries(Map.entry((int) 'ß', "ss"),
            Map.entry((int) 'ẞ', "SS"), Map.entry((int) 'æ', "ae"), Map.entry((int) 'Æ', "AE"),
            Map.entry((int) 'œ', "oe"), Map.entry((int) 'Œ', "OE"), Map.entry((int) 'ø', "o"),
            Map.entry((int) 'Ø', "O"), Map.entry((int) 'đ', "d"), Map.entry((int) 'Đ', "D"),
            Map.entry((int) 'ł', "l"), Map.entry((int) 'Ł', "L"), Map.entry((int) 'þ', "th"),
            Map.entry((int) 'Þ', "Th"), Map.entry((int) 'ð', "d"), Map.entry((int) 'Ð', "D"),
            Map.entry((int) 'ı', "i"));

    // ------------------------------------------------------------------------------------ normal form

    /**
     * A language-region tag glued to a name, as label dumps sometimes write the label's {@code @en-GB} into its
     * text ("Denmark-GB", "Actor-GB"): two capitals after a hyphen that ends a word typed in lower case.
     */
    private static final Pattern REGION_TAG = Pattern.compile("(?<=\\p{Ll})-[A-Z]{2}$");

    /** The words of an entity's name as people say it: {@link #normalize}d, without a glued region tag. */
    static String nameWords(String name) {
        return normalize(REGION_TAG.matcher(name).replaceFirst(""));
    }

    /** Lower-case words without accents or punctuation, single-spaced ("Schindler's List" -> "schindler s list"). */
    static String normalize(String text) {
        String decomposed = Normalizer.normalize(text, Normalizer.Form.NFKD);
        StringBuilder plain = new StringBuilder(decomposed.length());
        decomposed.codePoints().filter(cp -> !isAccent(cp)).forEach(cp -> {
            String folded = FOLDED.get(cp);
            if (folded != null) {
                plain.append(folded);
            } else {
                plain.appendCodePoint(cp);
            }
        });
        String lower = plain.toString().toLowerCase(Locale.ROOT);
        StringBuilder out = new StringBuilder(lower.length());
        boolean inWord = false;
        for (int i = 0; i < lower.length(); ) {
            int cp = lower.codePointAt(i);
            i += Character.charCount(cp);
            if (isLetterOrNumber(cp)) {
                if (!inWord && out.length() > 0) {
                    out.append(' ');
                }
                out.appendCodePoint(cp);
                inWord = true;
            } else {
                inWord = false;
            }
        }
        return out.toString();
    }

    /**
     * Whether {@code cp} is an accent: a mark with a non-zero canonical combining class, as NFKD splits it off
     * its letter ("é" -> "e" + U+0301). Marks of class 0 (most Indic vowel signs) are no accents: {@link
     * #normalize} keeps them past this filter, and then, being neither letters nor numbers, they separate words
     * as punctuation does. Java has no public accessor for the class, so it is probed through canonical
     * reordering: NFD moves a mark of class 1..239 in front of U+0345 (class 240, the highest there is);
     * U+0345 itself is the only mark of class 240.
     */
    static boolean isAccent(int cp) {
        int type = Character.getType(cp);
        if (type != Character.NON_SPACING_MARK && type != Character.COMBINING_SPACING_MARK
                && type != Character.ENCLOSING_MARK) {
            return false;
        }
        if (cp == 0x345) {
            return true;
        }
        String probe = "\u0345" + new String(Character.toChars(cp));
        return !Normalizer.normalize(probe, Normalizer.Form.NFD).equals(probe);
    }

    /** A letter or any kind of number (digits, Roman numerals, fractions): what a word of a name is made of. */
    static boolean isLetterOrNumber(int cp) {
        if (Character.isLetter(cp)) {
            return true;
        }
        int type = Character.getType(cp);
        return type == Character.DECIMAL_DIGIT_NUMBER || type == Character.LETTER_NUMBER
                || type == Character.OTHER_NUMBER;
    }

    // ------------------------------------------------------------------------------------ the question

    /** The question cut at whitespace, each piece with its normal form. */
    static List<Token> tokens(String question) {
        List<Token> tokens = new ArrayList<>();
        for (String text : split(question)) {
            tokens.add(new Token(text, normalize(text)));
        }
        return tokens;
    }

    /** Tokens {@code start} (inclusive) to {@code end} (exclusive) that may name an entity. */
    record Span(int start, int end) {
    }

    /**
     * Every span of at most {@link EntityLinker#MAX_SPAN_TOKENS} tokens that starts and ends on a word (not on
     * punctuation), left to right, shorter first: the order in which the linker lets a span stand for a name.
     */
    static List<Span> spans(List<Token> tokens) {
        List<Span> out = new ArrayList<>();
        for (int i = 0; i < tokens.size(); i++) {
            if (tokens.get(i).norm().isEmpty()) {
                continue;
            }
            for (int j = i + 1; j <= Math.min(tokens.size(), i + EntityLinker.MAX_SPAN_TOKENS); j++) {
                if (!tokens.get(j - 1).norm().isEmpty()) {
                    out.add(new Span(i, j));
                }
            }
        }
        return out;
    }

    /** The tokens {@code start} (inclusive) to {@code end} (exclusive) as typed, single-spaced. */
    static String join(List<Token> tokens, int start, int end) {
        StringBuilder out = new StringBuilder();
        for (int k = start; k < end; k++) {
            if (k > start) {
                out.append(' ');
            }
            out.append(tokens.get(k).text());
        }
        return out.toString();
    }

    /** A token is content unless it is punctuation or made only of stop words. */
    static boolean[] content(List<Token> tokens, Set<String> stop) {
        return content(tokens, stop, Set.of());
    }

    /**
     * @param questionStems stems of the KG's question words: "starring" asks as "starred" does
     */
    static boolean[] content(List<Token> tokens, Set<String> stop, Set<String> questionStems) {
        boolean[] content = new boolean[tokens.size()];
        for (int k = 0; k < content.length; k++) {
            String norm = tokens.get(k).norm();
            boolean asks = true;
            for (String w : split(norm)) {
                asks &= stop.contains(w) || (length(w) > 3 && questionStems.contains(LinkingWords.stem(w)));
            }
            content[k] = !norm.isEmpty() && !asks;
        }
        return content;
    }

    /** Capitals after the first token, in a question that is not all capitals: then case carries meaning. */
    static boolean hasCase(List<Token> tokens, String question) {
        boolean upper = false;
        for (int k = 1; k < tokens.size() && !upper; k++) {
            upper = tokens.get(k).text().codePoints().anyMatch(Character::isUpperCase);
        }
        return upper && !isAllCapitals(question);
    }

    /** Crude stems (first four letters of words of four letters or more): "starred", "star" -> "star". */
    static Set<String> stems(Iterable<String> texts) {
        Set<String> stems = new HashSet<>();
        for (String text : texts) {
            for (String w : split(text)) {
                if (length(w) >= 4) {
                    stems.add(w.substring(0, w.offsetByCodePoints(0, 4)));
                }
            }
        }
        return stems;
    }

    /** The words of one relation name longer than two letters and not numbers: "film.film.directed_by" -> film, directed. */
    static Set<String> relationNameWords(String name) {
        Set<String> words = new LinkedHashSet<>();
        for (String w : split(normalize(RELATION_SEPARATOR.matcher(name).replaceAll(" ")))) {
            if (length(w) > 2 && !isDigits(w)) {
                words.add(w);
            }
        }
        return words;
    }

    // ------------------------------------------------------------------------- whitespace and punctuation

    /**
     * Whether {@code cp} separates words: Java's whitespace plus the no-break spaces (U+00A0, U+2007,
     * U+202F) and NEL, which {@link Character#isWhitespace} leaves out but which pasted text carries between
     * words. {@link QuestionText} reads brackets with the same rule as {@code kgqa.core.text}.
     */
    static boolean isSpace(int cp) {
        return Character.isWhitespace(cp) || Character.isSpaceChar(cp) || cp == 0x85;
    }

    /** The pieces of {@code text} between runs of {@linkplain #isSpace spaces}; no empty pieces. */
    static List<String> split(String text) {
        List<String> parts = new ArrayList<>();
        int i = 0;
        while (i < text.length()) {
            int cp = text.codePointAt(i);
            if (isSpace(cp)) {
                i += Character.charCount(cp);
                continue;
            }
            int start = i;
            while (i < text.length() && !isSpace(text.codePointAt(i))) {
                i += Character.charCount(text.codePointAt(i));
            }
            parts.add(text.substring(start, i));
        }
        return parts;
    }

    /** {@code text} without {@linkplain #isSpace spaces} at either end. */
    static String strip(String text) {
        int start = 0;
        int end = text.length();
        while (start < end && isSpace(text.codePointAt(start))) {
            start += Character.charCount(text.codePointAt(start));
        }
        while (end > start && isSpace(text.codePointBefore(end))) {
            end -= Character.charCount(text.codePointBefore(end));
        }
        return text.substring(start, end);
    }

    /** {@code text} without {@link #OUTER_PUNCT} at either end. */
    static String stripPunct(String text) {
        return stripPunctEnd(stripPunctStart(text));
    }

    static String stripPunctStart(String text) {
        int start = 0;
        while (start < text.length() && OUTER_PUNCT.indexOf(text.charAt(start)) >= 0) {
            start++;
        }
        return text.substring(start);
    }

    static String stripPunctEnd(String text) {
        int end = text.length();
        while (end > 0 && OUTER_PUNCT.indexOf(text.charAt(end - 1)) >= 0) {
            end--;
        }
        return text.substring(0, end);
    }

    // ---------------------------------------------------------------------------------------- case

    /** The first letter in upper case ("o'hara" -> "O'hara", "ß" -> "SS"), the rest as it is. */
    static String capitalizeFirst(String word) {
        if (word.isEmpty()) {
            return word;
        }
        int first = Character.charCount(word.codePointAt(0));
        return word.substring(0, first).toUpperCase(Locale.ROOT) + word.substring(first);
    }

    /** Whether {@code text} starts with an upper-case letter. */
    static boolean startsUpper(String text) {
        return !text.isEmpty() && Character.isUpperCase(text.codePointAt(0));
    }

    /** Whether the token starts with a capital once its opening quotes or brackets are set aside. */
    static boolean typedCapitalised(Token token) {
        return startsUpper(stripPunctStart(token.text()));
    }

    /** A common English word typed as one (not capitalised): "the lead singer" is not Bryan Singer. */
    static boolean typedCommon(Token token, Predicate<String> english) {
        return english.test(token.norm()) && !typedCapitalised(token);
    }

    /** Letters a word typed as one needs before it is also looked for as two words: shorter ones split into bits. */
    static final int MIN_SPLIT_LETTERS = 7;
    /** ... and at most: a longer run of letters is rarely a name typed without its space or hyphen. */
    static final int MAX_SPLIT_LETTERS = 16;
    /** Letters each half of such a split has at least. */
    static final int MIN_SPLIT_PART = 3;

    /**
     * A word as the two words of a name typed without the space or hyphen between them ("spiderman" for
     * "Spider-Man", "superbowl" for "Super Bowl"): every split into halves of at least {@value #MIN_SPLIT_PART}
     * letters, space-separated. The index holds such names as two words, so the word alone never finds them:
     * {@link FulltextQuery} asks for each split as a phrase, and {@link HitAlignment} matches the name's letters
     * squeezed. Letters only: a number is no name's half.
     */
    static List<String> splits(String word) {
        int length = word.length();
        if (length < MIN_SPLIT_LETTERS || length > MAX_SPLIT_LETTERS
                || !word.chars().allMatch(c -> c >= 'a' && c <= 'z')) {
            return List.of();
        }
        List<String> phrases = new ArrayList<>();
        for (int cut = MIN_SPLIT_PART; cut <= length - MIN_SPLIT_PART; cut++) {
            phrases.add(word.substring(0, cut) + " " + word.substring(cut));
        }
        return phrases;
    }

    /**
     * A word typed as two common English words without the space between them ("highschool"), in lower case:
     * ordinary words, like {@link #typedCommon}, though a name's squeezed letters match it.
     */
    static boolean typedCommonSqueezed(Token token, Predicate<String> english) {
        if (typedCapitalised(token)) {
            return false;
        }
        for (String phrase : splits(token.norm())) {
            int space = phrase.indexOf(' ');
            if (english.test(phrase.substring(0, space)) && english.test(phrase.substring(space + 1))) {
                return true;
            }
        }
        return false;
    }

    /**
     * A year ("2012"). Typed right after a name it says when, as ordinary words say what ("governor of indiana
     * 2012"), and the entity it names exactly (a film called "2012") is rarely the topic.
     */
    static boolean typedYear(Token token) {
        String t = token.norm();
        if (t.length() != 4) {
            return false;
        }
        for (int i = 0; i < 4; i++) {
            if (!Character.isDigit(t.charAt(i))) {
                return false;
            }
        }
        int year = Integer.parseInt(t);
        return year >= 1000 && year <= 2099;
    }

    static boolean startsWithDigit(String text) {
        return !text.isEmpty() && Character.isDigit(text.codePointAt(0));
    }

    /** Non-empty and digits only ("1987"). */
    static boolean isDigits(String text) {
        return !text.isEmpty() && text.codePoints().allMatch(Character::isDigit);
    }

    /**
     * Some upper-case letter and no lower- or title-case one ("WHO DIRECTED 1999?"): typed in capitals, so the
     * capitals say nothing about which words are names.
     */
    static boolean isAllCapitals(String text) {
        boolean upper = false;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            if (Character.isLowerCase(cp) || Character.isTitleCase(cp)) {
                return false;
            }
            upper |= Character.isUpperCase(cp);
            i += Character.charCount(cp);
        }
        return upper;
    }

    /** Characters as a reader counts them: code points. */
    static int length(String text) {
        return text.codePointCount(0, text.length());
    }
}
