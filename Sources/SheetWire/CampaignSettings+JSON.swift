import JSONKit
public import SheetPolicy

extension CampaignSettings {
    /// The body of `GET`/`PUT /v1/settings` (and the settings of a catalog revision):
    /// `{"globalCap": {"max", "periodSeconds"} | null, "minIntervalSeconds"}`.
    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter()
        w.object { o in
            if let cap = globalCap {
                o.objectMember("globalCap") { c in
                    c.member("max", cap.max)
                    c.member("periodSeconds", cap.periodSeconds)
                }
            } else {
                o.member("globalCap") { $0.null() }
            }
            o.member("minIntervalSeconds", minIntervalSeconds)
        }
        return w.bytes
    }
}
