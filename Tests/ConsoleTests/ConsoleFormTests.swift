@testable import Console
import Testing

/// What arrives from the browser (form bodies, cookies) and what goes back into HTML.
@Suite("Console: forms, cookies, escaping", .timeLimit(.minutes(2)))
struct ConsoleFormTests {
    @Test("form bodies: percent and plus decoding, the first of repeated names, invalid UTF-8 dropped")
    func forms() {
        let fields = FormFields.decode(Array("a=1&b=x+y%21&a=2&c&bad=%FF%FE&confirm=REPLAY+4".utf8))
        #expect(fields["a"] == "1" && fields["b"] == "x y!" && fields["c"] == "" && fields["confirm"] == "REPLAY 4")
        #expect(fields["bad"] == "")
        #expect(FormFields.decode(Array("%zz=1&=2".utf8)) == ["%zz": "1"])
    }

    @Test("cookies: the named one, among others")
    func cookies() {
        #expect(FormFields.cookie("console_session", header: "a=1; console_session=abc; b=2") == "abc")
        #expect(FormFields.cookie("console_session", header: "xconsole_session=abc") == nil)
        #expect(FormFields.cookie("console_session", header: nil) == nil)
    }

    @Test("every value written into a page is escaped")
    func escaping() {
        #expect(HTML.escape("<script>alert(\"x\")</script>&'") == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;")
        let table = HTML.table(["h<"], [["<img src=x onerror=alert(1)>"]])
        #expect(!table.contains("<img") && table.contains("&lt;img"))
        #expect(HTML.query("a b&c=d/é") == "a%20b%26c%3Dd%2F%C3%A9")
    }
}
