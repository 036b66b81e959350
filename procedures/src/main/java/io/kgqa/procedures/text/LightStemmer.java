package io.kgqa.procedures.text;

/**
 * A light English stemmer: one common ending off, then a doubled final consonant ("starring" -> "star"). The
 * endings are the caller's, since linking must not strip what relation words may ("-ion", "-en").
 */
public final class LightStemmer {

    private LightStemmer() {
    }

    /** {@code word} (already lower case) without the first of {@code suffixes} it ends with, if 3 letters stay. */
    public static String stem(String word, String[] suffixes) {
        String w = word;
        for (String suffix : suffixes) {
            if (w.endsWith(suffix) && w.length() - suffix.length() >= 3) {
                w = w.substring(0, w.length() - suffix.length());
                break;
            }
        }
        int n = w.length();
        if (n >= 4 && w.charAt(n - 1) == w.charAt(n - 2) && "aeiou".indexOf(w.charAt(n - 1)) < 0) {
            w = w.substring(0, n - 1);
        }
        return w;
    }
}
