package io.kgqa.procedures.linking;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The few Python string semantics the linker's results depend on, so that the Java linker and
 * {@code retrieve/linking.py} cut, fold and rank a question identically.
 *
 * <p>Python indexes strings by code point and Java by UTF-16 unit; Python's {@code str.isspace},
 * {@code \w}, {@code str.strip}, {@code str.isupper}, {@code round} and string ordering each differ
 * from their nearest Java counterpart on some input. Everything here works on code points.
 */
final class PyText {

    private PyText() {
    }

    /** {@code str.isspace()} of one character: Java's whitespace plus the no-break spaces and NEL. */
    static boolean isSpace(int cp) {
        return Character.isWhitespace(cp) || Character.isSpaceChar(cp) || cp == 0x85;
    }

    /** {@code \w} of Python's {@code re} on str patterns: {@code isalnum()} or '_'. */
    static boolean isWord(int cp) {
        if (cp == '_' || Character.isLetter(cp)) {
            return true;
        }
        int type = Character.getType(cp);
        return type == Character.DECIMAL_DIGIT_NUMBER || type == Character.LETTER_NUMBER
                || type == Character.OTHER_NUMBER;
    }

    /**
     * {@code unicodedata.combining(ch) != 0}. Java has no public accessor for the canonical combining
     * class, so it is probed through canonical reordering: NFD moves a mark of class 1..239 in front of
     * U+0345 (class 240, the highest there is); U+0345 itself is the only mark of class 240.
     */
    static boolean isCombining(int cp) {
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

    /** {@code str.strip()}: Python whitespace off both ends. */
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

    /** {@code str.strip(chars)}. */
    static String strip(String text, String chars) {
        return rstrip(lstrip(text, chars), chars);
    }

    /** {@code str.lstrip(chars)}. */
    static String lstrip(String text, String chars) {
        int start = 0;
        while (start < text.length() && chars.indexOf(text.codePointAt(start)) >= 0) {
            start += Character.charCount(text.codePointAt(start));
        }
        return text.substring(start);
    }

    /** {@code str.rstrip(chars)}. */
    static String rstrip(String text, String chars) {
        int end = text.length();
        while (end > 0 && chars.indexOf(text.codePointBefore(end)) >= 0) {
            end -= Character.charCount(text.codePointBefore(end));
        }
        return text.substring(0, end);
    }

    /** {@code str.split()}: runs of Python whitespace separate, no empty parts. */
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

    /** {@code len(text)}: code points. */
    static int length(String text) {
        return text.codePointCount(0, text.length());
    }

    /** {@code text[:1]}: the first code point, or "" . */
    static String first(String text) {
        return text.isEmpty() ? "" : text.substring(0, Character.charCount(text.codePointAt(0)));
    }

    /** {@code text[:4]}: the first four code points (the whole text when shorter). */
    static String prefix(String text, int codePoints) {
        if (length(text) <= codePoints) {
            return text;
        }
        return text.substring(0, text.offsetByCodePoints(0, codePoints));
    }

    /** {@code str.lower()} (full case mapping, final sigma included, locale-independent). */
    static String lower(String text) {
        return text.toLowerCase(Locale.ROOT);
    }

    /** {@code w[:1].upper() + w[1:]}. */
    static String capitalizeFirst(String word) {
        String head = first(word);
        return head.toUpperCase(Locale.ROOT) + word.substring(head.length());
    }

    /** {@code ch.isupper()} of the first character; false for "". */
    static boolean firstIsUpper(String text) {
        return !text.isEmpty() && Character.isUpperCase(text.codePointAt(0));
    }

    /** {@code ch.isdigit()} of the first character; false for "". */
    static boolean firstIsDigit(String text) {
        return !text.isEmpty() && Character.isDigit(text.codePointAt(0));
    }

    /** {@code str.isdigit()}: non-empty and every character a digit. */
    static boolean isDigits(String text) {
        return !text.isEmpty() && text.codePoints().allMatch(Character::isDigit);
    }

    /** {@code str.isupper()}: some cased character and none lower- or title-case. */
    static boolean isUpper(String text) {
        boolean cased = false;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            if (Character.isLowerCase(cp) || Character.isTitleCase(cp)) {
                return false;
            }
            cased |= Character.isUpperCase(cp);
            i += Character.charCount(cp);
        }
        return cased;
    }

    /** Python's string order: by code point (Java's compareTo orders UTF-16 units, which differs above U+FFFF). */
    static int compare(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i);
            int y = b.codePointAt(j);
            if (x != y) {
                return Integer.compare(x, y);
            }
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    }

    /**
     * {@code round(x, digits)}: the exact binary value rounded half-even to {@code digits} decimals and
     * read back, as CPython does. Rounded scores order the candidates, so the last bit matters.
     */
    static double round(double x, int digits) {
        if (!Double.isFinite(x)) {
            return x;
        }
        String decimal = new BigDecimal(x).setScale(digits, RoundingMode.HALF_EVEN).toPlainString();
        return Double.parseDouble(decimal);
    }

    /** The code points of {@code text}. */
    static int[] codePoints(String text) {
        return text.codePoints().toArray();
    }
}
