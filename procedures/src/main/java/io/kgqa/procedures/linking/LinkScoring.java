package io.kgqa.procedures.linking;

import io.kgqa.procedures.linking.LinkText.Token;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Every number that weighs a link, in one place: how well each kind of lookup matches a name, how the span's
 * length, words and capitals turn that into a score, and the scores that resolution keeps. The values were
 * tuned together on the KGs' questions: change one and the order of candidates elsewhere changes too.
 */
final class LinkScoring {

    private LinkScoring() {
    }

    // ------------------------------------------------------------------- match quality, per lookup (0..1)

    /** The span as typed names the entity, but in other case, in a question without capitals: it cannot say. */
    static final double EXACT_CASE_UNKNOWN = 0.99;
    /** The span in other case than the name, in a question that uses case: a little less likely meant. */
    static final double EXACT_OTHER_CASE = 0.96;
    /** A plural said for a singular name ("westerns" for "Western"): a little below an exact match. */
    static final double SINGULAR_MATCH = 0.93;
    /** ... but below a name that holds the plural as typed ("Atlanta Braves" for "braves", before "Brave"). */
    static final double SINGULAR_BESIDE_PLURAL_NAME = 0.7;
    /** Full text: the span's words are the name's words, punctuation aside ("Amelie" for "Amélie"). */
    static final double FULLTEXT_MATCH = 0.95;
    /** Full text: the same letters, spaced otherwise ("spiderman" for "Spider Man"): a little less sure. */
    static final double SQUEEZED_MATCH = 0.93;
    /** Quality a typo costs per edit, relative to the name's length: one edit in a short name costs more. */
    static final double EDIT_PENALTY = 1.5;
    /** A person named by the last word of their name ("Herzog" for "Werner Herzog"): below any full name. */
    static final double PARTIAL_MATCH = 0.8;
    /** ... less per name word beyond two: "Portrait of Werner Herzog" is less likely a person than the name. */
    static final double PARTIAL_EXTRA_WORD = 0.06;
    /** A person named by a short first name before the surname ("abe lincoln" for "Abraham Lincoln"). */
    static final double SHORT_FIRST_NAME_MATCH = 0.85;
    /** A name said without the words many of the KG's names share ("Microsoft" for "Microsoft Corporation"). */
    static final double HEAD_MATCH = 0.9;
    /** A name said by a part of it no other name shares ("Verizon" for "Verizon Communications"). */
    static final double DISTINCTIVE_MATCH = 0.85;
    /** A famous name said by its first words, which rarer names share ("united states"): as a surname alone. */
    static final double PREFIX_MATCH = 0.8;
    /**
     * A place or faith said by the word for its people or language ("canadians" for Canada): a step removed
     * from the name, so a little below one said without its common words ("chinese" is "Chinese language"
     * before China) and below any exact name ("Russian", where the KG has one); both stay linked.
     */
    static final double DERIVED_MATCH = 0.88;
    /** A name typed as its initials ("USA"). */
    static final double INITIALS_MATCH = 0.9;
    /** A vector neighbour, times its cosine: a near-identical embedding is weaker evidence than any spelling. */
    static final double VECTOR_MATCH = 0.75;

    // ----------------------------------------------------------------------------- the span's score

    /** Characters of question words count this much towards a span's length: "The" says less than "Fall". */
    static final double STOP_CHAR_WEIGHT = 0.4;
    /** Share of the score a very short span can lose: a few letters often happen to be someone's name. */
    static final double SHORT_SPAN_PENALTY = 0.55;
    /** Characters over which the short-span penalty falls by a factor e: by three words it is all but gone. */
    static final double SHORT_SPAN_CHARS = 6;
    /** Share a one-word name loses besides: many names share a single word, fewer share two. */
    static final double ONE_WORD_PENALTY = 0.15;
    /** A span of question words only ("Up", "Her"), capitalised: a name perhaps, though not as typed. */
    static final double QUESTION_WORDS_CAPITALISED = 0.6;
    /** A span of question words only, not capitalised ("what", "movies"): rarely the entity meant. */
    static final double QUESTION_WORDS_ONLY = 0.25;
    /** A surname alone in a question typed all in lower case: it cannot show itself as a name. */
    static final double SURNAME_IN_LOWER_CASE = 0.85;
    /** A name said without its common words, in a question typed all in lower case ("facebook", "denmark"). */
    static final double HEAD_IN_LOWER_CASE = 0.85;
    /** Per content word next to the span: the name the user typed probably goes on ("Bad Boy" in "Bad Boy Bubby"). */
    static final double NEXT_TO_CONTENT_WORD = 0.85;
    /** Every judged word capitalised, in a question that uses case: typed as a name. */
    static final double CAPITALISED = 1.12;
    /** No judged word capitalised, in a question that uses case: typed as ordinary words. */
    static final double NOT_CAPITALISED = 0.88;
    /**
     * A span of ordinary English words ("president", "high school", "airport") beside a name elsewhere in the
     * question: the question asks about the name, and the ordinary words say what of it.
     */
    static final double ORDINARY_WORDS_BESIDE_NAME = 0.8;
    /**
     * The same with an article, right before the name: they say what kind of thing it is ("the band
     * radiohead"), and a namesake of theirs ("The Band") is not a second topic. Without the article the
     * words are as often a name of their own ("maryland senators", "connecticut 2010").
     */
    static final double ORDINARY_WORDS_BEFORE_NAME = 0.5;
    /** The question uses a word of one of the entity's relations ("star" -> starred_actors): decides namesakes. */
    static final double RELATION_CUE = 1.03;

    // ------------------------------------------------------------------------------------- resolution

    /** A candidate below this is not returned at all. */
    static final double MIN_SCORE = 0.30;
    /** Further entities must score at least this fraction of the best one. */
    static final double SECONDARY_RATIO = 0.75;
    /** An entity with the very same name as a chosen one, on the same span, within this ratio, stands too. */
    static final double TWIN_RATIO = 0.95;
    /** A name typed with its capitals stays beside a better one when matched at least this closely (a typo or two). */
    static final double TYPED_NAME_MATCH = 0.6;

    private static final Pattern RELATION_SEPARATORS = Pattern.compile("[._/]+");
    private static final Set<String> ASKING = Set.of("what", "which");
    // "what kind of language", "what are the airports": words between the question word and what it asks for
    private static final Set<String> KIND_OF = Set.of("kind", "kinds", "sort", "sorts", "type", "types", "of",
            "are", "were", "the");

    /**
     * How likely the span means the entity: match quality times name-likeness of the span. Sets and returns
     * {@code c.score}, which may exceed 1 after the nudges (ranked as is, reported capped at 1).
     *
     * @param cues stems of the question's words ({@link LinkText#stems})
     */
    static double score(Candidate c, List<Token> tokens, boolean[] content, boolean hasCase, Set<String> cues) {
        int contentChars = 0;
        int stopChars = 0;
        int contentWords = 0;
        for (int k = c.start; k < c.end; k++) {
            int chars = LinkText.length(tokens.get(k).norm().replace(" ", ""));
            if (content[k]) {
                contentChars += chars;
                contentWords++;
            } else {
                stopChars += chars;
            }
        }
        // a name said by its head counts the words said: "Germany" is not the longer "Germany national team";
        // so does one said without its spaces, or with a typo: "florida" is one word, whether the name is
        // "Florida" or "Flo Rida", and "spiderman" is as likely "Spider-Man" as "Spider-Man 3"
        int nameWords = saidByPart(c) ? Math.max(c.end - c.start, 1)
                : Math.max(LinkText.split(LinkText.normalize(c.name)).size(), 1);
        if ("fulltext".equals(c.how) || "fuzzy".equals(c.how)) {
            nameWords = Math.min(nameWords, Math.max(saidWords(c, tokens), 1));
        }
        // Longer names are less likely to be accidental: saturating in characters and in words.
        double weight = contentChars + STOP_CHAR_WEIGHT * stopChars;
        double score = c.match * (1 - SHORT_SPAN_PENALTY * Math.exp(-weight / SHORT_SPAN_CHARS)
                - ONE_WORD_PENALTY * Math.exp(-(nameWords - 1)));
        // Capitals, when the question has any: sentence-initial words say nothing, so they are skipped.
        List<Boolean> capital = new ArrayList<>();
        for (int k = c.start; k < c.end; k++) {
            Token t = tokens.get(k);
            boolean judged = (content[k] || contentWords == 0) && !t.norm().isEmpty() && k > 0
                    && !(k > c.start && LinkText.MINOR.contains(t.norm()));
            if (judged) {
                capital.add(LinkText.typedCapitalised(t) || LinkText.startsWithDigit(t.norm()));
            }
        }
        boolean capitalised = hasCase && !capital.isEmpty() && !capital.contains(false);
        c.capitalised = capitalised;
        c.spelledWithoutCase = !hasCase && contentWords >= 2;
        c.questionWordsOnly = contentWords == 0;
        // a capitalised word next to the span: the name typed goes on ("The Other" in "The Other Woman")
        boolean standsAlone = capitalised && !capitalisedAt(tokens, c.start - 1) && !capitalisedAt(tokens, c.end);
        if (contentWords == 0) { // only question words ("what", "movies", "star"): rarely the entity meant ...
            // ... unless typed with its capitals mid-sentence, exactly as the entity is named ("the director of Up")
            boolean typedName = standsAlone && "exact".equals(c.how) && c.match >= 1.0;
            score *= typedName ? 1.0 : capitalised ? QUESTION_WORDS_CAPITALISED : QUESTION_WORDS_ONLY;
        }
        // A surname alone ("Herzog"), or after a short first name, is a name only when typed as one: capitalised, in a question that uses
        // case; a question typed all in lower case ("what did spielberg direct") cannot say, so it counts less.
        if (("partial".equals(c.how) || "short".equals(c.how)) && !standsAlone) {
            score = hasCase ? 0 : score * SURNAME_IN_LOWER_CASE;
        }
        // A name said without its common words ("Microsoft") only when typed as a name: an ordinary word
        // ("just curious") is not "Curious George". A question typed all in lower case cannot show it ("where
        // are facebook headquarters"), so there it counts less.
        if (saidByPart(c) && !capitalised) {
            score = hasCase ? 0 : score * HEAD_IN_LOWER_CASE;
        }
        for (int k : new int[] {c.start - 1, c.end}) {
            if (k >= 0 && k < tokens.size() && content[k]) {
                score *= NEXT_TO_CONTENT_WORD;
            }
        }
        if (capitalised) {
            score *= CAPITALISED;
        } else if (hasCase && !capital.isEmpty() && !capital.contains(true)) {
            score *= NOT_CAPITALISED;
        }
        // a small nudge that decides between namesakes ("lee pace" the tag, "Lee Pace" the actor) and little else
        if (!cues.isEmpty() && !c.types.isEmpty()) {
            List<String> relationTexts = new ArrayList<>();
            for (String type : c.types) {
                relationTexts.add(LinkText.normalize(RELATION_SEPARATORS.matcher(type).replaceAll(" ")));
            }
            Set<String> relationStems = LinkText.stems(relationTexts);
            relationStems.retainAll(cues);
            if (!relationStems.isEmpty()) {
                score *= RELATION_CUE;
            }
        }
        c.score = score;
        return score;
    }

    /** The words a candidate's span says, as normalised ("spider-man" is two, "spiderman" one). */
    private static int saidWords(Candidate c, List<Token> tokens) {
        int words = 0;
        for (int k = c.start; k < c.end; k++) {
            words += LinkText.split(tokens.get(k).norm()).size();
        }
        return words;
    }

    /**
     * Lowers every candidate whose span is ordinary words only ({@code ordinary}: per token, a common English
     * word typed as one) when a candidate that is not, on other words, scores {@link #MIN_SCORE}: the name is
     * the topic ("the prime minister of ethiopia"), and more when they come right before it with an
     * article ("the band radiohead"). A question of ordinary words only keeps its scores.
     */
    static void yieldToNames(Collection<Candidate> candidates, boolean[] ordinary) {
        yieldToNames(candidates, ordinary, new boolean[ordinary.length], List.of());
    }

    /**
     * As {@link #yieldToNames(Collection, boolean[])}, where a name matched by its letters without their spaces
     * ("High school" for "highschool") is ordinary words too when its span is two common words squeezed
     * ({@code squeezedCommon}, per token: {@link LinkText#typedCommonSqueezed}); an exact name such a word
     * also spells ("The Godfather", "Roundtree") is not.
     */
    static void yieldToNames(Collection<Candidate> candidates, boolean[] ordinary, boolean[] squeezedCommon,
                             List<Token> tokens) {
        List<Candidate> names = new ArrayList<>();
        for (Candidate c : candidates) {
            c.ordinary = ordinaryWords(c, ordinary) || (squeezed(c, tokens) && ordinaryWords(c, squeezedCommon));
            if (c.score >= MIN_SCORE && !c.ordinary) {
                names.add(c);
            }
        }
        for (Candidate c : candidates) {
            if (c.ordinary) {
                double factor = 1.0;
                for (Candidate name : names) {
                    if (c.end == name.start && c.start < tokens.size()
                            && DETERMINERS.contains(tokens.get(c.start).norm())) {
                        factor = ORDINARY_WORDS_BEFORE_NAME;
                        break;
                    }
                    if (name.end <= c.start || c.end <= name.start) {
                        factor = ORDINARY_WORDS_BESIDE_NAME;
                    }
                }
                c.score *= factor;
            }
        }
    }

    /**
     * The chosen links with the one on the words a leading "what" or "which" asks for (within the question's
     * first two words; "kind of", "are the" skipped) moved behind the others, unless typed capitalised: "what
     * airport in paris" is about Paris. It stays linked, as a second topic may be meant ("which comedies did
     * Woody Allen direct").
     */
    static List<Candidate> askedKindLast(List<Candidate> chosen, List<Token> tokens) {
        int asked = askedKindStart(tokens);
        if (asked < 0) {
            return chosen;
        }
        List<Candidate> named = new ArrayList<>();
        List<Candidate> askedFor = new ArrayList<>();
        for (Candidate c : chosen) {
            (c.start == asked && !c.capitalised ? askedFor : named).add(c);
        }
        if (askedFor.isEmpty() || named.isEmpty()) {
            return chosen;
        }
        named.addAll(askedFor);
        return named;
    }

    /** Words between a role and the name it is said of that say nothing of either ("the editor of the X"). */
    private static final Set<String> DETERMINERS = Set.of("the", "a", "an");
    /** A possessive's ending as typed ("Zoolander's", "the Beatles'", a typographic apostrophe too). */
    private static final Pattern POSSESSIVE =
            Pattern.compile(".*(['\u2019]s|s['\u2019])$", Pattern.CASE_INSENSITIVE);

    /**
     * The chosen links without one on a role said of another link right beside it: "the cinematographer of
     * Michael Clayton", "the cinematographer on Raiders of the Lost Ark", "Zoolander's composer". In English
     * those words name what is asked of that name (a relation), not a second topic: linked, a profession entity
     * named like the role led the methods to everyone of that profession. Typed capitalised, it may be a name
     * itself, and stays. A number ("spike lee's 1989 movie") narrows the name's answers down: a second topic,
     * which stays too. A word many facts share does not: "Zoolander's composer" names a profession entity as
     * often as "Tarantino's horror films" names a genre, and on our questions the role was meant.
     */
    static List<Candidate> withoutRoleOfName(List<Candidate> chosen, List<Token> tokens) {
        List<Candidate> kept = new ArrayList<>(chosen.size());
        for (Candidate c : chosen) {
            boolean role = !c.capitalised && !SpanResolver.isLiteral(c)
                    && (saidOfNameAfter(c, chosen, tokens) || saidOfNameBefore(c, chosen, tokens));
            if (!role) {
                kept.add(c);
            }
        }
        return kept.isEmpty() ? chosen : kept;
    }

    /** "ROLE of|on [the] NAME": another link starts right after the preposition or its article. */
    private static boolean saidOfNameAfter(Candidate c, List<Candidate> chosen, List<Token> tokens) {
        int k = c.end;
        if (k >= tokens.size() || !("of".equals(tokens.get(k).norm()) || "on".equals(tokens.get(k).norm()))) {
            return false;
        }
        int from = k + 1; // the name may begin with its article ("on The Godfather")
        int to = from;
        while (to < tokens.size() && DETERMINERS.contains(tokens.get(to).norm())) {
            to++;
        }
        int last = to;
        return chosen.stream().anyMatch(o -> o != c && o.start >= from && o.start <= last);
    }

    /** "NAME's ROLE": another link ends right before, on a possessive. */
    private static boolean saidOfNameBefore(Candidate c, List<Candidate> chosen, List<Token> tokens) {
        int k = c.start - 1;
        return k >= 0 && POSSESSIVE.matcher(tokens.get(k).text()).matches()
                && chosen.stream().anyMatch(o -> o != c && o.end == c.start);
    }

    /**
     * The chosen links with one on a role said before "of" and another link further on ("the president of
     * modern pakistan"; one right after "of" is dropped, {@link #withoutRoleOfName}) moved behind that other:
     * in English the words before "of" name what is asked of the name after it. Typed capitalised, it may be
     * a name itself, and is left in place; it stays linked either way.
     */
    static List<Candidate> roleOfNameLast(List<Candidate> chosen, List<Token> tokens) {
        List<Candidate> roles = new ArrayList<>();
        List<Candidate> named = new ArrayList<>();
        for (Candidate c : chosen) {
            int after = c.end;
            boolean beforeOf = after < tokens.size() && "of".equals(tokens.get(after).norm());
            boolean nameAfter = beforeOf && chosen.stream().anyMatch(o -> o != c && o.start > after);
            (nameAfter && !c.capitalised ? roles : named).add(c);
        }
        if (roles.isEmpty() || named.isEmpty()) {
            return chosen;
        }
        named.addAll(roles);
        return named;
    }

    /** Where the words a leading "what" or "which" asks for start; -1 when the question has no such word. */
    static int askedKindStart(List<Token> tokens) {
        for (int k = 0; k < Math.min(2, tokens.size()); k++) {
            if (ASKING.contains(tokens.get(k).norm())) {
                int start = k + 1;
                while (start < tokens.size() && KIND_OF.contains(tokens.get(start).norm())) {
                    start++;
                }
                return start < tokens.size() ? start : -1;
            }
        }
        return -1;
    }

    /** Whether a full-text match says the name in fewer words than it has: its letters without their spaces. */
    private static boolean squeezed(Candidate c, List<Token> tokens) {
        return "fulltext".equals(c.how) && !tokens.isEmpty()
                && saidWords(c, tokens) < LinkText.split(LinkText.normalize(c.name)).size();
    }

    private static boolean ordinaryWords(Candidate c, boolean[] ordinary) {
        for (int k = c.start; k < c.end; k++) {
            if (!ordinary[k]) {
                return false;
            }
        }
        return true;
    }

    /**
     * A name said by a part of it (without its common words, a part no other name has, the first words of a
     * famous one) or by a word derived from it.
     */
    static boolean saidByPart(Candidate c) {
        return "head".equals(c.how) || "distinctive".equals(c.how) || "prefix".equals(c.how)
                || "derived".equals(c.how);
    }

    /** Whether token {@code k} exists, is not the first of the question, and starts with a capital. */
    private static boolean capitalisedAt(List<Token> tokens, int k) {
        return k >= 1 && k < tokens.size() && LinkText.typedCapitalised(tokens.get(k));
    }
}
