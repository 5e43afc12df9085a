print("suggest")
