import Courier
import Foundation
import Testing

/// RFC 6570's own examples (sections 1.2 and 3.2), its grammar's failure cases, and the
/// builder that applies a template to a request.
@Suite("URI templates (RFC 6570)")
struct URITemplateTests {
    /// The variables RFC 6570 §3.2 uses for its examples (§1.2 uses a subset of them).
    static let variables: [String: URITemplate.Value] = [
        "count": ["one", "two", "three"],
        "dom": ["example", "com"],
        "dub": "me/too",
        "hello": "Hello World!",
        "half": "50%",
        "var": "value",
        "who": "fred",
        "base": "http://example.com/home/",
        "path": "/foo/bar",
        "list": ["red", "green", "blue"],
        "keys": ["semi": ";", "dot": ".", "comma": ","],
        "v": "6",
        "x": "1024",
        "y": "768",
        "empty": "",
        "empty_keys": .associative([]),
        "undef": nil,
    ]

    static let section1_2: [(String, String)] = [
        // Level 1
        ("{var}", "value"), ("{hello}", "Hello%20World%21"),
        // Level 2
        ("{+var}", "value"), ("{+hello}", "Hello%20World!"), ("{+path}/here", "/foo/bar/here"),
        ("here?ref={+path}", "here?ref=/foo/bar"), ("X{#var}", "X#value"), ("X{#hello}", "X#Hello%20World!"),
        // Level 3
        ("map?{x,y}", "map?1024,768"), ("{x,hello,y}", "1024,Hello%20World%21,768"),
        ("{+x,hello,y}", "1024,Hello%20World!,768"), ("{+path,x}/here", "/foo/bar,1024/here"),
        ("{#x,hello,y}", "#1024,Hello%20World!,768"), ("{#path,x}/here", "#/foo/bar,1024/here"),
        ("X{.var}", "X.value"), ("X{.x,y}", "X.1024.768"), ("{/var}", "/value"), ("{/var,x}/here", "/value/1024/here"),
        ("{;x,y}", ";x=1024;y=768"), ("{;x,y,empty}", ";x=1024;y=768;empty"), ("{?x,y}", "?x=1024&y=768"),
        ("{?x,y,empty}", "?x=1024&y=768&empty="), ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
        ("{&x,y,empty}", "&x=1024&y=768&empty="),
        // Level 4
        ("{var:3}", "val"), ("{var:30}", "value"), ("{list}", "red,green,blue"), ("{list*}", "red,green,blue"),
        ("{keys}", "semi,%3B,dot,.,comma,%2C"), ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
        ("{+path:6}/here", "/foo/b/here"), ("{+list}", "red,green,blue"), ("{+list*}", "red,green,blue"),
        ("{+keys}", "semi,;,dot,.,comma,,"), ("{+keys*}", "semi=;,dot=.,comma=,"),
        ("{#path:6}/here", "#/foo/b/here"), ("{#list}", "#red,green,blue"), ("{#list*}", "#red,green,blue"),
        ("{#keys}", "#semi,;,dot,.,comma,,"), ("{#keys*}", "#semi=;,dot=.,comma=,"),
        ("X{.var:3}", "X.val"), ("X{.list}", "X.red,green,blue"), ("X{.list*}", "X.red.green.blue"),
        ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"), ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
        ("{/var:1,var}", "/v/value"), ("{/list}", "/red,green,blue"), ("{/list*}", "/red/green/blue"),
        ("{/list*,path:4}", "/red/green/blue/%2Ffoo"), ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
        ("{/keys*}", "/semi=%3B/dot=./comma=%2C"), ("{;hello:5}", ";hello=Hello"), ("{;list}", ";list=red,green,blue"),
        ("{;list*}", ";list=red;list=green;list=blue"), ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
        ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"), ("{?var:3}", "?var=val"), ("{?list}", "?list=red,green,blue"),
        ("{?list*}", "?list=red&list=green&list=blue"), ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
        ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"), ("{&var:3}", "&var=val"), ("{&list}", "&list=red,green,blue"),
        ("{&list*}", "&list=red&list=green&list=blue"), ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
        ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
    ]

    static let section3_2: [(String, String)] = [
        // 3.2.1 Variable expansion
        ("{count}", "one,two,three"), ("{count*}", "one,two,three"), ("{/count}", "/one,two,three"),
        ("{/count*}", "/one/two/three"), ("{;count}", ";count=one,two,three"),
        ("{;count*}", ";count=one;count=two;count=three"), ("{?count}", "?count=one,two,three"),
        ("{?count*}", "?count=one&count=two&count=three"), ("{&count*}", "&count=one&count=two&count=three"),
        // 3.2.2 Simple string expansion
        ("{var}", "value"), ("{hello}", "Hello%20World%21"), ("{half}", "50%25"), ("O{empty}X", "OX"),
        ("O{undef}X", "OX"), ("{x,y}", "1024,768"), ("{x,hello,y}", "1024,Hello%20World%21,768"),
        ("?{x,empty}", "?1024,"), ("?{x,undef}", "?1024"), ("?{undef,y}", "?768"), ("{var:3}", "val"),
        ("{var:30}", "value"), ("{list}", "red,green,blue"), ("{list*}", "red,green,blue"),
        ("{keys}", "semi,%3B,dot,.,comma,%2C"), ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
        // 3.2.3 Reserved expansion
        ("{+var}", "value"), ("{+hello}", "Hello%20World!"), ("{+half}", "50%25"),
        ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"), ("{+base}index", "http://example.com/home/index"),
        ("O{+empty}X", "OX"), ("O{+undef}X", "OX"), ("{+path}/here", "/foo/bar/here"),
        ("here?ref={+path}", "here?ref=/foo/bar"), ("up{+path}{var}/here", "up/foo/barvalue/here"),
        ("{+x,hello,y}", "1024,Hello%20World!,768"), ("{+path,x}/here", "/foo/bar,1024/here"),
        ("{+path:6}/here", "/foo/b/here"), ("{+list}", "red,green,blue"), ("{+list*}", "red,green,blue"),
        ("{+keys}", "semi,;,dot,.,comma,,"), ("{+keys*}", "semi=;,dot=.,comma=,"),
        // 3.2.4 Fragment expansion
        ("{#var}", "#value"), ("{#hello}", "#Hello%20World!"), ("{#half}", "#50%25"), ("foo{#empty}", "foo#"),
        ("foo{#undef}", "foo"), ("{#x,hello,y}", "#1024,Hello%20World!,768"), ("{#path,x}/here", "#/foo/bar,1024/here"),
        ("{#path:6}/here", "#/foo/b/here"), ("{#list}", "#red,green,blue"), ("{#list*}", "#red,green,blue"),
        ("{#keys}", "#semi,;,dot,.,comma,,"), ("{#keys*}", "#semi=;,dot=.,comma=,"),
        // 3.2.5 Label expansion with dot-prefix
        ("{.who}", ".fred"), ("{.who,who}", ".fred.fred"), ("{.half,who}", ".50%25.fred"), ("www{.dom*}", "www.example.com"),
        ("X{.var}", "X.value"), ("X{.empty}", "X."), ("X{.undef}", "X"), ("X{.var:3}", "X.val"),
        ("X{.list}", "X.red,green,blue"), ("X{.list*}", "X.red.green.blue"), ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
        ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"), ("X{.empty_keys}", "X"), ("X{.empty_keys*}", "X"),
        // 3.2.6 Path segment expansion
        ("{/who}", "/fred"), ("{/who,who}", "/fred/fred"), ("{/half,who}", "/50%25/fred"), ("{/who,dub}", "/fred/me%2Ftoo"),
        ("{/var}", "/value"), ("{/var,empty}", "/value/"), ("{/var,undef}", "/value"), ("{/var,x}/here", "/value/1024/here"),
        ("{/var:1,var}", "/v/value"), ("{/list}", "/red,green,blue"), ("{/list*}", "/red/green/blue"),
        ("{/list*,path:4}", "/red/green/blue/%2Ffoo"), ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
        ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
        // 3.2.7 Path-style parameter expansion
        ("{;who}", ";who=fred"), ("{;half}", ";half=50%25"), ("{;empty}", ";empty"), ("{;v,empty,who}", ";v=6;empty;who=fred"),
        ("{;v,bar,who}", ";v=6;who=fred"), ("{;x,y}", ";x=1024;y=768"), ("{;x,y,empty}", ";x=1024;y=768;empty"),
        ("{;x,y,undef}", ";x=1024;y=768"), ("{;hello:5}", ";hello=Hello"), ("{;list}", ";list=red,green,blue"),
        ("{;list*}", ";list=red;list=green;list=blue"), ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
        ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
        // 3.2.8 Form-style query expansion
        ("{?who}", "?who=fred"), ("{?half}", "?half=50%25"), ("{?x,y}", "?x=1024&y=768"),
        ("{?x,y,empty}", "?x=1024&y=768&empty="), ("{?x,y,undef}", "?x=1024&y=768"), ("{?var:3}", "?var=val"),
        ("{?list}", "?list=red,green,blue"), ("{?list*}", "?list=red&list=green&list=blue"),
        ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"), ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
        // 3.2.9 Form-style query continuation
        ("{&who}", "&who=fred"), ("{&half}", "&half=50%25"), ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
        ("{&x,y,empty}", "&x=1024&y=768&empty="), ("{&x,y,undef}", "&x=1024&y=768"), ("{&var:3}", "&var=val"),
        ("{&list}", "&list=red,green,blue"), ("{&list*}", "&list=red&list=green&list=blue"),
        ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"), ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
    ]

    @Test(arguments: section1_2)
    func section1_2Examples(template: String, expected: String) throws {
        #expect(try URITemplate(template).expand(Self.variables) == expected)
    }

    @Test(arguments: section3_2)
    func section3_2Examples(template: String, expected: String) throws {
        #expect(try URITemplate(template).expand(Self.variables) == expected)
    }

    @Test(arguments: [
        // Variable names may hold dots and %-escapes; escapes in names are kept as written.
        ("{last.name}", ["last.name": "Doe"], "Doe"),
        ("/lookup{?Stra%C3%9Fe}", ["Stra%C3%9Fe": "Grüner Weg"], "/lookup?Stra%C3%9Fe=Gr%C3%BCner%20Weg"),
        // Non-ASCII values are UTF-8 percent-encoded; prefixes count characters, not bytes.
        ("{word}", ["word": "drücken"], "dr%C3%BCcken"), ("{word:3}", ["word": "drücken"], "dr%C3%BC"),
        ("{e:1}", ["e": "😀x"], "%F0%9F%98%80"),
        // Reserved expansion keeps valid escapes and encodes a bare %.
        ("{+id}", ["id": "admin%2F"], "admin%2F"), ("{id}", ["id": "admin%2F"], "admin%252F"),
        ("{+p}", ["p": "%foo"], "%25foo"), ("{+l}", ["l": ["red%25", "blue "]], "red%25,blue%20"),
        // Empty lists and associative arrays are undefined.
        ("{/e}{?e*}{&a*}", ["e": .list([]), "a": .associative([])], ""),
        // Numbers, booleans and explode of a single value.
        ("{?n,f,b}", ["n": 6, "f": 37.76, "b": true], "?n=6&f=37.76&b=true"), ("{/id*}", ["id": "person"], "/person"),
        // Exploded associative arrays with empty values.
        ("{?k*}", ["k": ["a": "", "b": "1"]], "?a=&b=1"), ("{;k*}", ["k": ["a": ""]], ";a"), ("{/k*}", ["k": ["a": ""]], "/a="),
        // Literals outside expressions are copied; non-ASCII literals are encoded.
        ("/café/{x}", ["x": "1"], "/caf%C3%A9/1"), ("/a%20b", [:], "/a%20b"),
    ] as [(String, [String: URITemplate.Value], String)])
    func moreExpansions(template: String, variables: [String: URITemplate.Value], expected: String) throws {
        #expect(try URITemplate(template).expand(variables) == expected)
    }

    @Test(arguments: [
        "{/id*", "/id*}", "{/?id}", "{var:prefix}", "{hello:2*}", "{??hello}", "{!hello}", "{=path}", "{$var}",
        "{|var*}", "{*keys?}", "{?empty=default,var}", "{var}{-prefix|/-/|var}", "?q={searchTerms}&amp;c={example:color?}",
        "x{?empty|foo=none}", "/h{#hello+}", "/h#{hello+}", "?{-join|&|var,list}", "/people/{~thing}",
        "/sparql{?query){&default-graph-uri*}", "/resolution{?x, y}", "{}", "{,a}", "{a,}", "{a..b}", "{.a.}", "{a:0}",
        "{a:10000}", "{a:01}", "100%", "%zz", "a b", "<x>", "{@a}", "{,}", "{a:1:2}", "{ä}", "a\"b", "back\\slash",
    ])
    func malformedTemplatesAreErrors(template: String) {
        #expect(throws: URITemplate.Error.self) { try URITemplate(template) }
    }

    @Test(arguments: ["{keys:1}", "{+keys:1}", "{list:2}", "{?list:1}"])
    func prefixOnCompositeValueIsAnExpansionError(template: String) throws {
        let parsed = try URITemplate(template)
        #expect(throws: URITemplate.Error.self) { try parsed.expand(Self.variables) }
    }

    /// `'` is a URI sub-delimiter, copied as it is (RFC 6570 §3.1), as the public uritemplate-test
    /// suite expects; every literal URI character (unreserved, reserved, `%XX`) is copied too.
    @Test(arguments: [
        ("'{var}'", "'value'"), ("{+var}'s", "value's"), ("/it's/{var}", "/it's/value"),
        ("!$&()*+,;=:@/?#[]-._~", "!$&()*+,;=:@/?#[]-._~"),
    ])
    func uriCharactersInLiteralsAreCopied(template: String, expected: String) throws {
        #expect(try URITemplate(template).expand(Self.variables) == expected)
    }

    @Test func colonInALiteralIsAllowedByTheGrammar() throws {
        // RFC 6570 §2.1 allows ":" (%x28-3B) in literals.
        #expect(try URITemplate("/vars/:var").expand([:]) == "/vars/:var")
    }

    @Test func errorsSayWhereTheProblemIs() {
        let error = #expect(throws: URITemplate.Error.self) { try URITemplate("/users{id") }
        #expect(error?.message == "unclosed expression at offset 6")
    }

    // MARK: The builder

    @Test func templateBuilderAppendsPathAndQuery() throws {
        let request = Request.get |> baseURL("https://api.test/v1")
            |> template("/users/{id}{?fields*,limit}", ["id": 42, "fields": ["a", "b"]])
        #expect(request.problems.isEmpty)
        #expect(request.renderedURL == "https://api.test/v1/users/42?fields=a&fields=b")
        #expect(request.pathSegments == ["users", "42"])
    }

    @Test func templateValuesCannotAddPathSegments() throws {
        let request = Request.get |> baseURL("https://api.test") |> template("/files/{name}", ["name": "../../etc/passwd"])
        #expect(request.renderedURL == "https://api.test/files/..%2F..%2Fetc%2Fpasswd")
        let dots = Request.get |> baseURL("https://api.test") |> template("/files{/name}", ["name": ".."])
        #expect(dots.problemKinds == [.invalidPathSegment])
    }

    @Test func templateQueryValuesArriveIntact() throws {
        let request = Request.get |> baseURL("https://api.test") |> template("/search{?q}", ["q": "a+b c&d"])
        #expect(request.queryItems == [QueryItem(name: "q", value: "a+b c&d")])
        #expect(request.renderedURL == "https://api.test/search?q=a%2Bb%20c%26d")
    }

    @Test func malformedTemplateIsARecordedProblem() {
        let request = Request.get |> baseURL("https://api.test") |> template("/users/{id", ["id": 1])
        #expect(request.problemKinds == [.invalidTemplate])
    }

    @Test func templateWithAFragmentIsAProblem() {
        let request = Request.get |> baseURL("https://api.test") |> template("/doc{#section}", ["section": "intro"])
        #expect(request.problemKinds == [.invalidTemplate])
    }

    @Test func templateMustExpandToAPath() {
        let request = Request.get |> baseURL("https://api.test") |> template("{+u}", ["u": "https://evil.test/x"])
        #expect(request.problemKinds == [.invalidTemplate])
    }
}
