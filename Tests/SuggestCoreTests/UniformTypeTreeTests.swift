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
}
