"""The word lists and thresholds of ``cards``' reading of statements, as data: each with a
line on what it is for. A change here is measured on every outline set (the demo, the
other repositories, the template and varied voices, another writer's phrasings) and kept
only when it loses on none (docs/results.md, "Rules as data").

What a statement is about is read from the names it holds (resolved against the
repository and the conversation) and from its meaning (MiniLM, against the prototypes
below); these lists only say which words mark a question, a request, a negation, where
a name comes from, and which words are no names. None of them is a sentence frame.
"""

from __future__ import annotations

# -- questions and requests (``said.asks``) -----------------------------------------------
# a sentence ending in "?" led by one of these asks something and states nothing ...
QUESTION_WORDS = ("what", "which", "how", "why", "where", "who", "when", "whose", "is",
                  "are", "does", "do", "did", "was", "were", "has", "have")
# ... but one led by a modal, or by these openers, asks for something: it states what is
# wanted, when a verb other than "be"/"have" follows its subject ("can f reuse g?",
# "could f take (a, b)?", "how about putting f in m.py?"; not "could f be simpler?")
MODAL_WORDS = ("can", "could", "should", "would", "will", "shall", "may", "might",
               "how about", "what about", "why not", "wouldn't it be better if")
# after a modal's subject, these ask for a change as a verb does ("would f be able to
# reuse g?")
ABLE_PHRASES = ("be able to", "be allowed to")
# a line led by these, with no clause after it, is a heading worded as a question ("Where
# `f` should live.")
HEADING_WORDS = ("what", "which", "how", "where")
# the verbs after a modal's subject that ask about a state, not for a change
STATE_VERBS = frozenset({"be", "is", "are", "been", "have", "has", "had", "do", "does"})
# subjects a modal question may have beside a code name
PRONOUNS = frozenset({"i", "we", "you", "it", "they", "he", "she", "this", "that", "one",
                      "the", "our", "my", "your", "function", "method", "helper"})

# -- where a dependency comes from (``reading``) ----------------------------------------
# words before a bare module name that make it a place ("in orders", "into the text module")
PLACE_WORDS = ("in", "into", "to", "under", "inside", "within")
# words between a method and its class when said apart ("remove on Stock", "the remove
# method of the class Stock"): at most three of them
METHOD_LINKS = frozenset({"on", "of", "method", "the", "class"})
# words between a name and the module or file it comes from ("g from m", "g in m.py",
# "g out of m", "g of the m module"); "in" only pairs a name that is not the subject
SOURCE_WORDS = ("from", "in", "inside", "out of", "of", "within")
# words a module may be called by after its name ("the decimal module")
MODULE_WORDS = ("module", "package", "library", "lib", "file", "stdlib", "standard library")
# words before a common noun: a module's name after one is the noun ("open a socket")
DETERMINERS = ("a", "an", "the", "this", "that", "each", "every", "some", "any", "one")
# the word a passive statement names its subject after ("g should be used by f")
AGENT_WORDS = ("by",)
# words after which a name is the function a statement is about, when no name is a
# subject of the conversation yet ("for f, reuse g", "in f, use g", "g is there for f")
# (in this order: "bring in g for f" is about f)
SCOPE_WORDS = (("for",), ("in", "inside", "within", "into"), ("of",))
# the words after the name that does what a statement says ("f should reuse g", "g is
# there; f can call it"), when no name is a subject of the conversation yet
ACTING_WORDS = ("should", "must", "can", "could", "will", "would", "shall", "may",
                "has to", "needs to", "is supposed to", "ought to")
# standard modules whose names are also English words: a name only when quoted, after
# "import" / "from", or followed by "module" ("the time module")
WORD_MODULES = frozenset({
    "abc", "array", "code", "copy", "calendar", "decimal", "email", "enum", "glob", "html",
    "http", "io", "keyword", "locale", "numbers", "operator", "platform", "queue",
    "random", "resource", "sched", "secrets", "select", "signal", "site", "string",
    "struct", "symbol", "test", "this", "time", "token", "trace", "types", "wave",
    "collections", "statistics", "fractions", "inspect", "logging", "math", "os", "sys",
})

# -- negation (``uses``) -----------------------------------------------------------------
# "not ... anything but g", "never ... nothing except g": a negation that says to use g
ALL_WORDS = ("anything", "nothing")
EXCEPT_WORDS = ("but", "except", "other than")
# verbs that say a name is used, beside "use"/"reuse"/"call"/"import"/"depend on"/"rely on"
USE_VERBS = ("use", "reuse", "call", "import", "depend on", "rely on", "lean on",
             "build on", "go through", "delegate to", "pull in", "bring in", "wrap")

# -- words that are never names, even when a repository defines a function of that name
# (a bare word resolves as a name only when it is a symbol or a subject of the
# conversation, or spelled like code: snake_case, dotted, CamelCase, a call "f()")
PLAIN_WORDS = frozenset({
    "a", "an", "the", "and", "or", "not", "no", "it", "its", "is", "be", "to", "of", "in",
    "on", "by", "for", "from", "with", "as", "at", "if", "then", "else", "return", "list",
    "set", "dict", "str", "int", "float", "bool", "none", "true", "false", "type", "file",
    "module", "function", "method", "class", "value", "values", "name", "names", "text",
    "get", "put", "use", "take", "make", "run", "call", "add", "remove", "sort", "split",
    "join", "map", "filter", "open", "read", "write", "parse", "format", "count", "sum",
    "max", "min", "all", "any", "len", "range", "next", "iter", "first", "last", "one",
    "this", "that", "these", "those", "should", "must", "can", "could", "would", "will",
    "anything", "nothing", "something", "everything", "i", "we", "you",
})

# -- aspects by meaning (``reading.Reader.aspect``) -------------------------------------------
# statements are embedded with their names masked ("the function", "the helper", "that
# file", "(a, b)"), and read as the aspect whose prototypes they are closest to, among
# the aspects whose values they hold (a place, a parameter list, a second name)
MASK_SUBJECT = "the function"
MASK_CLASS = "the class"  # the class of a method said with it ("`C`'s `f`")
MASK_NAME = "the helper"
MASKS = {"function": "the helper", "class": "the class", "exception": "an error",
         "constant": "the constant", "module": "the module"}  # by what a name is
MASK_PLACE = "that file"
MASK_ARGS = "(a, b)"
VALUE_ASPECTS = ("location", "parameters", "dependency")
PROTOTYPES: dict[str, tuple[str, ...]] = {
    "location": (
        "the function belongs in that file.",
        "put the function in that file.",
        "the function should live in that file.",
        "the function goes into that file.",
        "I want the function defined in that file.",
        "that file is where the function should be written.",
        "move the function to that file.",
    ),
    "parameters": (
        "the function takes (a, b).",
        "the function should accept (a, b).",
        "the signature of the function is (a, b).",
        "I'd have the function take (a, b) as its arguments.",
        "the parameters of the function are (a, b).",
        "the function is called with (a, b).",
        "let the function receive (a, b).",
    ),
    "dependency": (
        "the function should reuse the helper from that file.",
        "the function needs the class from the module.",
        "the helper should be used by the function.",
        "the function can rely on the helper instead of its own code.",
        "the function should call the helper.",
        "import the module in the function.",
        "have the function lean on the class.",
        "the function depends on the constant.",
        "the function should reuse an error defined in that file.",
        "use an error from the module in the function.",
    ),
    "behaviour": (
        "the function computes the total of the given values and returns it.",
        "it converts the input text into a list of records.",
        "the function splits the items into groups and yields each group in turn.",
        "it reads the file and returns the parsed contents as a dictionary.",
        "the function returns the remaining items sorted by quantity.",
        "the function formats the amount as a string with a currency sign.",
        "the function returns a list of (a, b) pairs, one per line of the input.",
        "it rounds the class to two places and returns it.",
        # the masks in prose too, so that they weigh the same on every side
        "the function in that file opens the resource and returns it.",
        "the function should: sort the items and return the first one.",
    ),
    "constraint": (
        "it raises an error when the argument is negative.",
        "an empty input is rejected with an error.",
        "if the key is missing, the function raises an error.",
        "the argument must be a positive integer, otherwise raise an error.",
        "invalid values are refused before anything is changed.",
        "anything that is not a number makes the function raise an error.",
        "the function never raises an error when the input is empty.",
        "the function in that file must refuse values above the limit.",
        "the function must give up after three attempts and use a delay of two seconds.",
        "for the function: at most three attempts are made.",
    ),
}
# a value aspect must beat behaviour and constraint by this much (cosine) to be read:
# below it, a statement holding a parameter list or a second name describes behaviour
VALUE_MARGIN = 0.05

# -- revision, with or without cue words (``graph``, ``revise``) ---------------------------
REVISE = 0.92  # cosine from which a same-subject fact revises the earlier one
REVISE_CUED = 0.55  # with a revision cue, this much similarity of its claim is enough
REVISE_AGAIN = 0.8  # a statement this close to what a cued one retracted revises it
SIMILAR = 0.75  # cosine for a ``similar`` edge
CLOSED_WORDS = 10  # a value-setting statement is short; a longer one is prose
SIMILAR_EDGES = 3  # per new node, at most
PROVISIONAL = 0.45  # cosine from which a later statement replaces a provisional one
# words by which a statement says it revises an earlier one (they help; none is needed)
CUE_WORDS = (
    "actually", "instead", "scratch that", r"forget (?:this|that|it|what)", "no longer",
    r"not any ?more", "rather than", "change of plan", "on second thought", "correction",
    r"revis\w*", r"replace[sd]? the", "the opposite holds", "from now on", "we changed",
    "changed my mind", r"(?:now |is )?outdated", "obsolete", "not:")
# the cues by which a statement quotes what it retracts ("Not: X", "forget this rule: X")
RETRACTING_CUES = ("not:", "forget", "(?:now |is )?outdated", "obsolete")
# a clause before a statement's first code span that sets a condition ("If empty, `f` ...")
# is part of its slot; any other is a remark ("Moving on, `f` ...") left out of its frame
CONDITION_WORDS = ("if", "when", "whenever", "unless", "while", "once", "after", "before",
                   "until", "since", "because", "although", "though", "where", "whereas")
# the verbs whose predicates hold several values: a function may need, reuse or call
# more than one thing, so a second such statement adds to the first (``graph.ADDITIVE``)
MANY_VALUED_VERBS = ("needs?", "uses?", "reuses?", "calls?", "imports?", "depends? on",
                     "relies on")
# words by which a statement says it holds only for a while: the next statement of the
# same predicate about its subject replaces it
PROVISIONAL_WORDS = (
    "for now", "for the moment", "for a first version", "as a first step", "to start with",
    "temporarily", "as a placeholder", r"(?:comes?|added|done|filled in) later")
RESTATE_WORDS = 0.7  # word-sequence similarity from which a statement restates another
RESTATE_COS = 0.7  # and the cosine it needs beside
RESTATE_MIN = 4  # words in common, at least (a three-word rule flips on one word)
NAME_CLOSE = 0.6  # name similarity from which a later dependency replaces an earlier one
NAME_NEAR = 0.4  # with the same module and kind, this much name similarity is enough
ROLE_CLOSE = 0.8  # or this much cosine between the two names' code in the repository
ASPECT_MARGIN = 0.1  # a statement's aspect must beat the runner-up by this much
CONVENTION = 0.45  # a convention must also be this close to one of its prototypes
CONSTRAINT_NEAR = 0.5  # two constraints this close (without their leads) set one rule
PARAPHRASE = 0.8  # two descriptions this close (without their leads) say one thing
BORROWED = 0.95  # a claim this close to another function's docstring describes that one
BORROW_SEARCH = 3  # functions of the repository a claim is compared with
JUDGED_AT_MOST = 2  # descriptions per new fact that the judge is asked about
# a statement describes what its function does when, its subject masked, it is closer to
# the behaviour prototypes (``PROTOTYPES``) than to those of these aspects by this much
# (a rule it keeps, a name it uses, said in prose); a later description replaces an
# earlier one (one account of what a function does: the latest), unless it says it adds
DESCRIBES = 0.05
DESCRIBED_APART = ("constraint", "dependency")
# words by which a statement says it adds to what was said, not replace it
ADDING_WORDS = ("also", "as well", "too", "in addition", "additionally", "besides",
                "another")
# words that keep a negation from negating a use ("not only uses g", "not just g")
NOT_NEGATING = ("only", "just", "merely")
# the words a line that only points at places may have beside its names ("(See `a.py`,
# `b.py::f`.)", "see also app/db.py")
POINTING_WORDS = frozenset({"see", "also", "cf", "eg", "ie", "and", "or", "in", "at", "the",
                            "here", "there"})

# the aspects a fact about a function may set, for the cue-free revision rules
# (``revise``): a statement's aspect is the one whose prototypes its MiniLM vector is
# closest to. Our own words, generic: no benchmark's phrasing.
REVISION_ASPECTS: dict[str, tuple[str, ...]] = {
    "behaviour": (
        "The function computes the total of the given values and returns it.",
        "It converts the input text into a list of records.",
        "The function splits the items into groups and yields each group in turn.",
        "It reads the file and returns the parsed contents as a dictionary.",
        "The method removes the entry and returns what is left.",
        "It merges the two iterables into one sorted sequence.",
        "The function formats the amount as a string with a currency sign.",
    ),
    "constraint": (
        "It raises ValueError when the argument is negative.",
        "An empty input is rejected with an error.",
        "If the key is missing, the function raises KeyError.",
        "The argument must be a positive integer, otherwise raise TypeError.",
        "Invalid values are refused before anything is changed.",
        "It must never modify its arguments in place.",
    ),
    "convention": (
        "Add type hints to every parameter and to the return value.",
        "Write a docstring with a short example for each public function.",
        "Name private helpers with a leading underscore.",
        "Log through the module logger instead of calling print.",
        "Use f-strings in the code, not percent formatting.",
        "Keep each function under forty lines and avoid global variables.",
    ),
}
