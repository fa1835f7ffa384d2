def main():
    print("stub")
