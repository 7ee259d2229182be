# issue 23 item 1: the impact ground's time-of-impact step against the continuous bounce
steer_test(impact_bounce_test fast)
