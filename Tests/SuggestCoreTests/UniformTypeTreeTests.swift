import Testing

@testable import SuggestCore

@Suite struct UniformTypeTreeTests {
    let tree = UniformTypeTree.standard

    @Test func conformanceIsReflexiveAndTransitive() {
        #expect(tree.conforms("public.jpeg", to: "public.jpeg"))
        #expect(tree.conforms("public.jpeg", to: "public.image"))
        #expect(tree.conforms("public.jpeg", to: "public.data"))
        #expect(tree.conforms("public.jpeg", to: "public.item"))
        #expect(tree.conforms("public.mpeg-4-audio", to: "public.audio"))
        #expect(tree.conforms("public.file-url", to: "public.url"))
        #expect(!tree.conforms("public.image", to: "public.jpeg"))
        #expect(!tree.conforms("public.url", to: "public.file-url"))
    }

    @Test func contentKindsGroupRelatedTypes() {
        #expect(tree.contentKind(of: "public.png") == "public.image")
        #expect(tree.contentKind(of: "public.heic") == "public.image")
        #expect(tree.contentKind(of: "public.file-url") == "public.file-url")
        #expect(tree.contentKind(of: "public.url") == "public.url")
        #expect(tree.contentKind(of: "com.example.custom") == "com.example.custom")
    }

    /// A tree of one's own holds only what it is given; one declared on top of the public tree keeps every public
    /// type; either way identifiers compare without regard to case.
    @Test func ownTreesAndDeclarationsOnTopOfThePublicOne() {
        let own = UniformTypeTree(parents: ["Com.Example.Photo": ["Com.Example.Media"], "com.example.media": []])
        #expect(own.isDeclared("com.example.photo") && own.isDeclared("COM.EXAMPLE.MEDIA"))
        #expect(!own.isDeclared("public.jpeg") && !own.conforms("public.jpeg", to: "public.image"))
        #expect(own.conforms("com.example.PHOTO", to: "com.example.media"))

        let extended = tree.declaring("Com.Example.Sketch", conformsTo: ["Public.Image"])
        #expect(extended.conforms("com.example.sketch", to: "public.data"))
        #expect(extended.conforms("public.JPEG", to: "public.image"))
        #expect(extended.contentKind(of: "COM.EXAMPLE.SKETCH") == "public.image")
        #expect(!tree.isDeclared("com.example.sketch"), "declaring must not change the tree it starts from")
        let twice = extended.declaring("public.jpeg", conformsTo: ["com.example.sketch"])
        #expect(twice.conforms("public.jpeg", to: "com.example.sketch") && twice.conforms("public.jpeg", to: "public.image"))
    }
}
