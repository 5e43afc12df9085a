import SuggestCore
import Testing

/// The writer puts commas between members and elements at every depth, and refuses to close what it never opened.
@Suite struct JSONWriterTests {
    @Test func commasAtEveryDepth() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("a")
        writer.beginArray()
        writer.integer(1)
        writer.beginObject()
        writer.key("b")
        writer.beginArray()
        writer.endArray()
        writer.key("c")
        writer.bool(true)
        writer.endObject()
        writer.beginArray()
        writer.endArray()
        writer.null()
        writer.endArray()
        writer.key("d")
        writer.beginObject()
        writer.endObject()
        writer.key("e")
        writer.string("x")
        writer.key("f")
        writer.number(0.5)
        writer.endObject()
        #expect(writer.text == #"{"a":[1,{"b":[],"c":true},[],null],"d":{},"e":"x","f":0.5}"#)
    }

    @Test func topLevelValuesOneAfterAnother() {
        var writer = JSONWriter()
        writer.beginArray()
        writer.endArray()
        writer.beginObject()
        writer.endObject()
        #expect(writer.text == "[],{}")
    }

    @Test func aCloseWithNothingOpenTraps() async {
        await #expect(processExitsWith: .failure) {
            var writer = JSONWriter()
            writer.beginArray()
            writer.endArray()
            writer.endObject()
        }
    }
}
