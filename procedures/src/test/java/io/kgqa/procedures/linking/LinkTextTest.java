package io.kgqa.procedures.linking;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** How the linker reads text: spaces, outer punctuation, accents, capitals, content words. */
class LinkTextTest {

    @Test
    void spansStartAndEndOnWordsLeftToRightShorterFirst() {
        List<LinkText.Token> tokens = LinkText.tokens("who , directed Kismet ?");
        assertEquals(5, tokens.size());
        assertEquals(List.of(new LinkText.Span(0, 1), new LinkText.Span(0, 3), new LinkText.Span(0, 4),
                new LinkText.Span(2, 3), new LinkText.Span(2, 4), new LinkText.Span(3, 4)), LinkText.spans(tokens));
        List<LinkText.Token> many = LinkText.tokens("a ".repeat(EntityLinker.MAX_SPAN_TOKENS + 3));
        assertTrue(LinkText.spans(many).stream().allMatch(s -> s.end() - s.start() <= EntityLinker.MAX_SPAN_TOKENS));
    }

    @Test
    void aRegionTagGluedToANameIsNotOneOfItsWords() {
        // a hyphenated name, capitals after a capital, or a longer code: the name's own words
        Map.of("Denmark-GB", "denmark", "Mountain Time Zone-US", "mountain time zone", "Jay-Z", "jay z",
                "Run-DMC", "run dmc", "AC-DC", "ac dc", "B-52", "b 52")
                .forEach((name, words) -> assertEquals(words, LinkText.nameWords(name), name));
    }

    @Test
    void noBreakSpacesAndNelSeparateWordsButAZeroWidthSpaceDoesNot() {
        for (int cp : new int[] {' ', '\t', '\n', 0x1c, 0x85, 0xa0, 0x2007, 0x202f, 0x3000, 0x2028}) {
            assertTrue(LinkText.isSpace(cp), Integer.toHexString(cp));
        }
        for (int cp : new int[] {'a', '_', 0x200b, 0xfeff}) {
            assertFalse(LinkText.isSpace(cp), Integer.toHexString(cp));
        }
        assertEquals(List.of("a", "b", "c", "d"), LinkText.split("a\u00a0b\u0085c \u202f d"));
        assertEquals(List.of(), LinkText.split(""));
        assertEquals("a b", LinkText.strip("\u2007 a b\u00a0"));
    }

    @Test
    void outerPunctuationComesOffEitherEndButNotFromInside() {
        assertEquals("O'Hara's", LinkText.stripPunct("\"O'Hara's\"?"));
        assertEquals("Heat\"?", LinkText.stripPunctStart("(\u201cHeat\"?"));
        assertEquals("(Heat", LinkText.stripPunctEnd("(Heat).,"));
        assertEquals("", LinkText.stripPunct("?!"));
        assertEquals("\ud83c\udfac", LinkText.stripPunct("'\ud83c\udfac'")); // an astral character is no quote
    }

    @Test
    void onlyMarksWithACombiningClassAreAccents() {
        assertTrue(LinkText.isAccent(0x301)); // acute
        assertTrue(LinkText.isAccent(0x345)); // the only mark of class 240
        assertTrue(LinkText.isAccent(0x94d)); // virama, class 9
        assertFalse(LinkText.isAccent(0x902)); // anusvara, class 0
        assertFalse(LinkText.isAccent('e'));
        assertEquals("cafe", LinkText.normalize("cafe\u0301"));
    }

    @Test
    void lettersAndEveryKindOfNumberMakeWords() {
        for (int cp : new int[] {'a', 'Z', 0x4e00, '7', 0x2167, 0xb2, 0x9f4, 0x20000}) {
            assertTrue(LinkText.isLetterOrNumber(cp), Integer.toHexString(cp));
        }
        for (int cp : new int[] {'_', '-', '\'', 0x301, 0x1f3ac}) {
            assertFalse(LinkText.isLetterOrNumber(cp), Integer.toHexString(cp));
        }
    }

    @Test
    void capitalsAreReadPerCodePoint() {
        assertEquals("SS and x", LinkText.capitalizeFirst("ß and x"));
        assertEquals("\ud801\udc00x", LinkText.capitalizeFirst("\ud801\udc28x")); // Deseret: astral case pair
        assertEquals("", LinkText.capitalizeFirst(""));
        assertTrue(LinkText.startsUpper("\ud801\udc00"));
        assertTrue(LinkText.typedCapitalised(new LinkText.Token("(\"Heat", "heat")));
        assertFalse(LinkText.typedCapitalised(new LinkText.Token("\"heat", "heat")));
        assertTrue(LinkText.isAllCapitals("ÀB 1999?"));
        assertFalse(LinkText.isAllCapitals("\u01c5B")); // a title-case letter
        assertFalse(LinkText.isAllCapitals("1999?")); // nothing cased
        assertTrue(LinkText.isDigits("1987"));
        assertFalse(LinkText.isDigits(""));
        assertFalse(LinkText.isDigits("7.5"));
        assertEquals(1, LinkText.length("\ud83c\udfac"));
    }

    @Test
    void caseCarriesMeaningOnlyPastTheFirstWordAndNotInAllCapitals() {
        assertTrue(LinkText.hasCase(LinkText.tokens("who directed Heat"), "who directed Heat"));
        assertFalse(LinkText.hasCase(LinkText.tokens("Who directed heat"), "Who directed heat"));
        assertFalse(LinkText.hasCase(LinkText.tokens("WHO DIRECTED HEAT"), "WHO DIRECTED HEAT"));
    }

    @Test
    void aQuestionWordsStemMakesItsOtherFormsQuestionWordsToo() {
        Set<String> stop = new HashSet<>(LinkText.STOPWORDS);
        List<LinkText.Token> tokens = LinkText.tokens("films starring Heat ?");
        assertArrayEquals(new boolean[] {true, true, true, false}, LinkText.content(tokens, stop));
        Set<String> stems = Set.of(LinkingWords.stem("starred"));
        assertArrayEquals(new boolean[] {true, false, true, false}, LinkText.content(tokens, stop, stems));
        assertEquals(Set.of("star", "film"), LinkText.stems(List.of("starred star", "films of")));
    }
}
