import Testing
import SuggestCore
import SuggestEval

@Test func smokeCollege() throws {
    var history: [Interaction] = []
    let clock = ContinuousClock()
    let t0 = clock.now
    try HistoryConverter.collegeMsg(.file("/work/shared/data/collegemsg/CollegeMsg.txt")) { history.append($0) }
    var enron: [Interaction] = []
    try HistoryConverter.enron(directory: "/work/shared/data/enron-perry-wolfe") { enron.append($0) }
    print("convert", clock.now - t0)
    for h in [history, enron] {
    for policy in RankingPolicy.all {
        let t = clock.now
        let r = try Evaluator.evaluate(h, policies: [policy])
        print(r[0].jsonText, clock.now - t)
    }
    }
}
