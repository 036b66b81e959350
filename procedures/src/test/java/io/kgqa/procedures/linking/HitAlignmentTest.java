package io.kgqa.procedures.linking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** Full-text hits placed back on the question: heads of names and surnames said alone. */
class HitAlignmentTest {

    private static HitAlignment.Hit hit(String name) {
        return new HitAlignment.Hit(null, name, name, 1, List.of());
    }

    private static Candidate partial(String name, String question) {
        return HitAlignment.partial(hit(name), LinkText.normalize(name), LinkText.tokens(question));
    }

    @Test
    void aNameIsSaidByItsRareWords() {
        Predicate<String> common = w -> w.equals("corporation") || w.equals("language");
        List<Candidate> found = HitAlignment.align(List.of(hit("Microsoft Corporation"), hit("Portuguese Language")),
                LinkText.tokens("who founded Microsoft"), common, w -> false);
        assertEquals(1, found.size());
        assertEquals("head", found.get(0).how);
        assertEquals(LinkScoring.HEAD_MATCH, found.get(0).match);
        assertEquals(List.of(2, 3), List.of(found.get(0).start, found.get(0).end));
        // nothing common, or nothing else: no head
        Map<String, HitAlignment.Window> windows = Map.of("microsoft", new HitAlignment.Window(2, 3, "microsoft"));
        assertNull(HitAlignment.head(hit("Microsoft Windows"), "microsoft windows", windows, common));
        assertNull(HitAlignment.head(hit("Corporation"), "corporation", windows, common));
        // a number left alone is a value the question states, not the event it dates
        Predicate<String> olympic = w -> w.equals("summer") || w.equals("olympics");
        Map<String, HitAlignment.Window> year = Map.of("1980", new HitAlignment.Window(5, 6, "1980"));
        assertNull(HitAlignment.head(hit("1980 Summer Olympics"), "1980 summer olympics", year, olympic));
    }

    @Test
    void anEnglishWordInPlaceOfANamesWordIsNoTypo() {
        Predicate<String> english = w -> w.equals("have") || w.equals("pit");
        List<HitAlignment.Hit> hits = List.of(hit("United States Navy"));
        assertEquals(List.of(), HitAlignment.align(hits,
                LinkText.tokens("what government does the united states have"), w -> false, english));
        // a typo that happens to spell a word is still a typo
        List<Candidate> pitt = HitAlignment.align(List.of(hit("Brad Pitt")), LinkText.tokens("films with brad pit"),
                w -> false, english);
        assertEquals(List.of("Brad Pitt|fuzzy|2"), pitt.stream().map(c -> c.name + "|" + c.how + "|" + c.start).toList());
    }

    @Test
    void aNameWithARegionTagIsSaidWithoutIt() {
        List<Candidate> found = HitAlignment.align(List.of(hit("Denmark-GB"), hit("Denmark national football team")),
                LinkText.tokens("what language do they speak in denmark"), w -> w.equals("national"), w -> false);
        assertEquals(List.of("Denmark-GB|fulltext|6"), found.stream()
                .filter(c -> !"head".equals(c.how)).map(c -> c.name + "|" + c.how + "|" + c.start).toList());
        assertEquals(LinkScoring.FULLTEXT_MATCH, found.stream().filter(c -> c.name.equals("Denmark-GB")).findFirst()
                .orElseThrow().match);        // and in the plural: the exact lookups cannot find a name stored with its tag
        List<Candidate> actors = HitAlignment.align(List.of(hit("Actor-GB")),
                LinkText.tokens("which actors were born in new haven"), w -> false, w -> true);
        assertEquals(List.of("Actor-GB|singular|1"),
                actors.stream().map(c -> c.name + "|" + c.how + "|" + c.start).toList());
        assertEquals(LinkScoring.SINGULAR_MATCH, actors.get(0).match);
    }

    @Test
    void aNameIsSaidByAPartNoOtherNameHas() {
        List<HitAlignment.Hit> hits = List.of(hit("Verizon Communications"), hit("Boston Red Sox"),
                hit("Chicago White Sox"), hit("The Magic of Belle Isle"));
        List<Candidate> verizon = HitAlignment.align(hits, LinkText.tokens("what company did verizon used to be"),
                w -> false, w -> false);
        assertEquals(List.of("Verizon Communications|distinctive|3"),
                verizon.stream().map(c -> c.name + "|" + c.how + "|" + c.start).toList());
        assertEquals(LinkScoring.DISTINCTIVE_MATCH, verizon.get(0).match);
        // two words no other name has together, though another has one of them
        List<Candidate> sox = HitAlignment.align(hits, LinkText.tokens("when did the red sox win"), w -> false,
                w -> false);
        assertEquals(List.of("Boston Red Sox|distinctive|3"),
                sox.stream().map(c -> c.name + "|" + c.how + "|" + c.start).toList());
        // a word two names share picks out neither; a common English word typed in lower case is that word
        assertEquals(List.of(), HitAlignment.align(hits, LinkText.tokens("who plays in sox"), w -> false, w -> false));
        assertEquals(List.of(), HitAlignment.align(hits, LinkText.tokens("what is magic"), w -> false,
                w -> w.equals("magic")));
        // a part begins and ends on words of its own, not on "of"
        List<Candidate> belle = HitAlignment.align(hits, LinkText.tokens("who wrote Belle"), w -> false, w -> false);
        assertEquals(List.of(2, 3), List.of(belle.get(0).start, belle.get(0).end));
        // ... and is no part when another entity is named by those words: then the name is that entity's
        Candidate film = new Candidate(null, "Belle", "Belle", 2, 3, "exact", 1.0, 1, List.of());
        List<Candidate> found = new java.util.ArrayList<>(belle);
        found.add(film);
        HitAlignment.dropPartsThatAreNames(found);
        assertEquals(List.of(film), found);
    }

    @Test
    void aFamousNameIsSaidByItsFirstWordsWhenFarBetterConnected() {
        int value = SpanResolver.SHARED_VALUE_DEGREE;
        HitAlignment.Hit country = new HitAlignment.Hit(null, "usa", "United States of America", 20 * value, List.of());
        HitAlignment.Hit dollar = new HitAlignment.Hit(null, "usd", "United States Dollar", 10 * value, List.of());
        HitAlignment.Hit navy = new HitAlignment.Hit(null, "navy", "United States Navy", value, List.of());
        List<Candidate> found = HitAlignment.align(List.of(country, dollar, navy),
                LinkText.tokens("what religion is practiced in the united states"), w -> false, w -> false);
        assertEquals(List.of("United States of America|prefix|6|8"),
                found.stream().map(c -> c.name + "|" + c.how + "|" + c.start + "|" + c.end).toList());
        assertEquals(LinkScoring.PREFIX_MATCH, found.get(0).match);
        // a holder within the margin makes the words ambiguous: nothing is said by them
        HitAlignment.Hit rival = new HitAlignment.Hit(null, "us-army", "United States Army", 15 * value, List.of());
        assertEquals(List.of(), HitAlignment.align(List.of(country, rival, navy),
                LinkText.tokens("what religion is practiced in the united states"), w -> false, w -> false));
        // a name few facts touch is not famous, however far ahead
        HitAlignment.Hit small = new HitAlignment.Hit(null, "ga", "Grand Army of the Republic", value - 1, List.of());
        HitAlignment.Hit film = new HitAlignment.Hit(null, "gaf", "Grand Army", 1, List.of());
        assertEquals(List.of(), HitAlignment.align(List.of(small, film), LinkText.tokens("who led the grand army"),
                w -> false, w -> false).stream().filter(c -> "prefix".equals(c.how)).toList());
        // one word says too little (a first name), and a year says a date, not an event
        HitAlignment.Hit kidman = new HitAlignment.Hit(null, "nk", "Nicole Kidman", 10 * value, List.of());
        HitAlignment.Hit games = new HitAlignment.Hit(null, "2008so", "2008 Summer Olympics", 10 * value, List.of());
        assertEquals(List.of(), HitAlignment.align(List.of(kidman, games),
                LinkText.tokens("what did anna nicole smith do in 2008"), w -> false, w -> false).stream()
                .filter(c -> "prefix".equals(c.how)).toList());
    }

    @Test
    void aSurnameSaidAloneNamesAPersonLikeName() {
        Candidate herzog = partial("Werner Herzog", "films by Herzog");
        assertEquals("partial", herzog.how);
        assertEquals(2, herzog.start);
        assertEquals(LinkScoring.PARTIAL_MATCH, herzog.match);
        // misspelt, and with more words around the surname: less sure
        Candidate typo = partial("Portrait Werner Herzog", "films by Hertzog");
        assertEquals(LinkScoring.PARTIAL_MATCH - LinkScoring.PARTIAL_EXTRA_WORD * 1 - LinkScoring.EDIT_PENALTY * 1 / 6,
                typo.match);
    }

    @Test
    void aShortFirstNameBeforeTheSurnameNamesThePerson() {
        Candidate abe = partial("Abraham Lincoln", "what town was abe lincoln born in");
        assertEquals(List.of("short", 3, 5), List.of(abe.how, abe.start, abe.end));
        assertEquals(LinkScoring.SHORT_FIRST_NAME_MATCH, abe.match);
        // in lower case too, though the surname is a common word: the first name says a person
        List<Candidate> ben = HitAlignment.align(List.of(hit("Benjamin Franklin"), hit("Franklin")),
                LinkText.tokens("what jobs did ben franklin do"), w -> false, w -> w.equals("franklin"));
        assertEquals(List.of("Benjamin Franklin|short|3|5", "Franklin|fulltext|4|5"),
                ben.stream().map(c -> c.name + "|" + c.how + "|" + c.start + "|" + c.end).toList());
        // another first name, a misspelt surname, or the whole first name: the surname alone or nothing
        assertEquals("partial", partial("Abraham Lincoln", "what did bob lincoln do").how);
        assertEquals("partial", partial("Abraham Lincoln", "what did abe lincon do").how);
        assertEquals("partial", partial("Ben Franklin", "what did ben franklin do").how);
    }

    @Test
    void onlyPersonLikeNamesHaveASurname() {
        assertNull(partial("The Other Woman", "films by Woman")); // starts with a minor word
        assertNull(partial("Werner herzog", "films by herzog")); // a lower-case word
        assertNull(partial("Ang Lee", "films by Lee")); // a surname of three letters matches too much
        assertNull(partial("Herzog", "films by Herzog")); // one word is the whole name
        assertNull(partial("A B C D Herzog", "films by Herzog")); // five words
        assertNull(partial("Werner Herzog", "films by Werzog")); // the first letter must match
    }
}
