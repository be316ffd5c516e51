// mcp-server-time: a conversion between two zones that never observe daylight saving time.
// want: 12:00 UTC is 21:00 in Asia/Tokyo (+9.0h)
r, err := convertTime(ctx, ConvertTimeInput{SourceTimezone: "UTC", Time: "12:00", TargetTimezone: "Asia/Tokyo"})
if err != nil {
	return err
}
fmt.Printf("12:00 UTC is %s in %s (%s)\n", r.Target.Datetime[11:16], r.Target.Timezone, r.TimeDifference)
